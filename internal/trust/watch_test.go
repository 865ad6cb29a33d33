package trust

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// settledWatch is a Watch whose stamps count as settled however fresh
// they are, so a test need not wait trust.Settle for each file.
func settledWatch() *Watch {
	return &Watch{start: time.Now().Add(time.Hour), usable: stampable}
}

// TestWatchSeesEveryKindOfChange: a fingerprint's record no longer holds
// after any change of what it looked at — content, a restored mtime, a
// file where none was, a folder's new entry, a link retargeted — and
// still holds after a change elsewhere.
func TestWatchSeesEveryKindOfChange(t *testing.T) {
	if !stampable {
		t.Skip("no change times on this platform: a Watch never holds")
	}
	for _, c := range []struct {
		name   string
		change func(t *testing.T, ws string)
		holds  bool
	}{
		{"nothing in it", func(t *testing.T, ws string) { put(t, ws, "README.md", "changed\n") }, true},
		{"a named script edited", func(t *testing.T, ws string) { put(t, ws, "tools/run.sh", "evil\n") }, false},
		{"an edit with its mtime put back", func(t *testing.T, ws string) {
			p := filepath.Join(ws, "lib.sh")
			fi, _ := os.Stat(p)
			put(t, ws, "lib.sh", "x evil\n") // the same 7 bytes
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a file where a command named none", func(t *testing.T, ws string) { put(t, ws, "later.cfg", "x\n") }, false},
		{"an entry added to .tally", func(t *testing.T, ws string) { put(t, ws, ".tally/more.sh", "x\n") }, false},
		{"an entry added to a named folder", func(t *testing.T, ws string) { put(t, ws, "tools/more.sh", "x\n") }, false},
		{"a link retargeted", func(t *testing.T, ws string) {
			tmp := filepath.Join(ws, "next")
			if err := os.Symlink("tools/other.sh", tmp); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(ws, "link.sh")); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			for name, body := range map[string]string{
				".tally/h.sh": "x\n", "tools/run.sh": "x\n", "tools/other.sh": "y\n",
				"lib.sh": "echo ok\n", "hook.sh": ". ./lib.sh\n", "README.md": "hello\n",
			} {
				put(t, ws, name, body)
			}
			if err := os.Symlink("tools/run.sh", filepath.Join(ws, "link.sh")); err != nil {
				t.Fatal(err)
			}
			w := settledWatch()
			p, err := NewWatched(ws, "hooks.json", nil, w)
			for _, line := range []string{"./hook.sh --config later.cfg", "sh tools/run.sh", "./link.sh"} {
				if err == nil {
					err = p.CommandLine(line)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if !w.Unchanged() {
				t.Fatal("the record does not hold before any change")
			}
			// A change time is kept at the clock's tick: a change in
			// the same tick as the writes above would keep it (the
			// case Settle guards against), which this test skips over.
			time.Sleep(30 * time.Millisecond)
			c.change(t, ws)
			if got := w.Unchanged(); got != c.holds {
				t.Errorf("after %s the record holds: %v; want %v", c.name, got, c.holds)
			}
		})
	}
}

// TestWatchDoesNotRelyOnFreshStamps: a file changed within Settle of the
// record's start may change again within the same tick of its change
// time, so such a record never holds; nor does a nil one.
func TestWatchDoesNotRelyOnFreshStamps(t *testing.T) {
	ws := t.TempDir()
	put(t, ws, ".tally/h.sh", "x\n")
	w := NewWatch()
	if _, err := NewWatched(ws, "hooks.json", nil, w); err != nil {
		t.Fatal(err)
	}
	if w.Unchanged() {
		t.Error("a record of files written just now holds")
	}
	var none *Watch
	if _, err := none.Lstat(ws); err != nil || none.Unchanged() {
		t.Errorf("a nil Watch: %v, holds %v", err, none.Unchanged())
	}
}

func put(t *testing.T, ws, name, body string) {
	t.Helper()
	p := filepath.Join(ws, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
