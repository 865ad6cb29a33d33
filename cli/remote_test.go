package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/workbench"
)

// openApp plays the desktop app on data: it holds the store open and
// serves the command line's reads, until the test ends.
func openApp(tb testing.TB, data string) *workbench.Workbench {
	tb.Helper()
	wb, _, err := workbench.Open(data, nil)
	if err != nil {
		tb.Fatal(err)
	}
	stop, err := ServeReads(wb, data)
	if err != nil {
		wb.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stop(); wb.Close() })
	return wb
}

// countWaits replaces waitOpen for the test with one that counts its calls
// and fails at once, as the lock's timeout would.
func countWaits(t *testing.T) *int {
	t.Helper()
	n := 0
	waitOpen = func(string, func(string) string) (*workbench.Workbench, error, error) {
		n++
		return nil, nil, workbench.ErrLocked
	}
	t.Cleanup(func() { waitOpen = workbench.Open })
	return &n
}

// Every command waited out the store's lock timeout, a second, before it
// asked the open app: a command finds the app on its socket without
// waiting for the lock, and still waits for a lock held by anything else.
func TestCommandsFindTheOpenAppWithoutWaitingForTheLock(t *testing.T) {
	data := t.TempDir()
	waits := countWaits(t)
	openApp(t, data)
	out, errOut, code := runCLI(t, "sessions", "--data", data)
	if code != 0 || *waits != 0 {
		t.Errorf("tally sessions with the app open: exit %d, %d wait(s) for the lock, out %q, stderr %q", code, *waits, out, errOut)
	}
	_, errOut, code = runCLI(t, "run", "--data", data, "hello")
	if code != ExitFail || *waits != 0 || !strings.Contains(errOut, "the Tally app has this data open") {
		t.Errorf("tally run with the app open: exit %d, %d wait(s) for the lock, stderr %q", code, *waits, errOut)
	}

	// Another command holds the store, no app serves it: wait for it.
	other := t.TempDir()
	wb, _, err := workbench.Open(other, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	if _, _, code := runCLI(t, "sessions", "--data", other); code != ExitFail || *waits != 1 {
		t.Errorf("tally sessions while another command holds the store: exit %d, %d wait(s) for the lock; want 1", code, *waits)
	}
}

// A rewind's dry run changes nothing but was refused while the app was
// open: it runs in the app, read-only; the rewind itself is still refused.
func TestRewindDryRunWhileTheAppIsOpen(t *testing.T) {
	srv := llmtest.New(undoScript())
	defer srv.Close()
	data, ws := t.TempDir(), workspace(t)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	if _, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat", "--session", "u", "--workspace", ws, "--yes", "turn one"); code != 0 {
		t.Fatalf("run exited %d: %s", code, errOut)
	}
	openApp(t, data)
	calc, _ := os.ReadFile(filepath.Join(ws, "calc", "calc.go"))

	out, errOut, code := runCLI(t, "rewind", "--data", data, "u", "--to", "1")
	if code != 0 {
		t.Fatalf("the dry run with the app open exited %d: %s", code, errOut)
	}
	mustHave(t, out, "Rewind to the start of turn 1", "restore        calc/calc.go", "remove         NOTES.md", "Dry run: nothing was changed")
	for _, yes := range []string{"--yes", "-yes", "--yes=true", "--yes=1"} {
		_, errOut, code = runCLI(t, "rewind", "--data", data, "u", "--to", "1", yes)
		if code != ExitFail || !strings.Contains(errOut, "the Tally app has this data open") {
			t.Errorf("rewind %s with the app open: exit %d, stderr %q", yes, code, errOut)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "calc", "calc.go")); string(b) != string(calc) {
		t.Error("a rewind through the app changed calc/calc.go")
	}
	if _, err := os.Stat(filepath.Join(ws, "NOTES.md")); err != nil {
		t.Errorf("a rewind through the app removed NOTES.md (%v)", err)
	}
	if !rewindDryRun([]string{"u", "--to", "1", "--yes=false"}) || rewindDryRun([]string{"u", "--to", "x"}) {
		t.Error("rewindDryRun misreads --yes=false or a bad --to")
	}
}

// BenchmarkSessionsWhileAppOpen times `tally sessions` while the app holds
// the store: the command used to wait out the store's lock timeout (a
// second) before it asked the app.
func BenchmarkSessionsWhileAppOpen(b *testing.B) {
	data := b.TempDir()
	openApp(b, data)
	for b.Loop() {
		if code := Main([]string{"sessions", "--data", data}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("tally sessions exited %d", code)
		}
	}
}

// BenchmarkSessionsAppClosed is the same command with nobody holding the
// store, for comparison.
func BenchmarkSessionsAppClosed(b *testing.B) {
	data := b.TempDir()
	for b.Loop() {
		if code := Main([]string{"sessions", "--data", data}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("tally sessions exited %d", code)
		}
	}
}
