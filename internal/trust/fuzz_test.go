package trust

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzCommandLine feeds command lines to a fingerprint of a small
// workspace: it never panics, never errors on a line (only on too much to
// hash, which this workspace cannot reach), and the same line always gives
// the same fingerprint.
func FuzzCommandLine(f *testing.F) {
	for _, s := range []string{"bash .tally/h.sh", `cd tools && sh "./my hook.sh"`, `sh tools/my\ hook.sh`, ". ./lib.sh", "$(cat x) | sh", "'unterminated", "a=b c=$TALLY_PROJECT_DIR/x ./run"} {
		f.Add(s)
	}
	ws := f.TempDir()
	for name, body := range map[string]string{".tally/h.sh": ". .tally/lib.sh\n", "tools/my hook.sh": "x\n", "lib.sh": ". ./hook.sh\n", "hook.sh": ". ./lib.sh\n"} {
		os.MkdirAll(filepath.Join(ws, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644)
	}
	f.Fuzz(func(t *testing.T, line string) {
		sum := func() string {
			p, err := New(ws, "hooks.json", nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.CommandLine(line); err != nil {
				t.Fatalf("CommandLine(%q): %v", line, err)
			}
			return p.Sum()
		}
		if a, b := sum(), sum(); a != b {
			t.Fatalf("CommandLine(%q) gives %s, then %s", line, a, b)
		}
	})
}
