package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/internal/trust"
)

// benchWorkspace writes a workspace whose trusted PreToolUse hook runs
// .tally/check.sh, with n more scripts of 2 KB beside it under .tally/lib
// (all of which the fingerprint covers), and opens a session on it.
func benchWorkspace(b *testing.B, n int) *Session {
	b.Helper()
	ws := b.TempDir()
	cfg := `{"hooks": {"PreToolUse": [{"matcher": "run_shell", "hooks": [{"type": "command", "command": "bash .tally/check.sh"}]}]}}`
	files := map[string]string{".tally/hooks.json": cfg, ".tally/check.sh": "#!/bin/sh\n. .tally/lib/s0.sh\n"}
	for i := range n {
		files[fmt.Sprintf(".tally/lib/s%d.sh", i)] = "#!/bin/sh\n" + strings.Repeat("echo checking the call\n", 90)
	}
	for name, body := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	_, wf, _, err := LoadWorkspace(ws, nil)
	if err != nil {
		b.Fatal(err)
	}
	hs := Open(Options{Workspace: ws, Trusted: func(h string) bool { return h == wf.Hash }})
	// Files this fresh are stamped too close to their last change to be
	// relied on; a real session's scripts were written long before.
	time.Sleep(trust.Settle + 100*time.Millisecond)
	return hs
}

// BenchmarkSelectHooks is the cost, per tool call a trusted workspace hook
// matches, of checking that the hook's files still have the content the
// user trusted, in a workspace whose .tally folder holds n scripts.
func BenchmarkSelectHooks(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			hs := benchWorkspace(b, n)
			for b.Loop() {
				if list, note := hs.selectHooks(PreToolUse, "run_shell"); len(list) != 1 || note != "" {
					b.Fatalf("the trusted hook was dropped: %d hooks, %q", len(list), note)
				}
			}
		})
	}
}
