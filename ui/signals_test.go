package ui

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/cli"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/remote"
)

// A SIGTERM ended the app without closing it: tally.sock stayed behind in
// the data directory. The signal now closes the app as its window's
// close button does, and the socket and its token go with it; if the UI
// never gets to it, the fallback removes them itself.
func TestSocketRemovedOnSIGTERM(t *testing.T) {
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	h := &harness{t: t, win: w, q: &queue{}, dir: t.TempDir()}
	var serving servingStop
	h.ui = New(a, w, newBridgeWith(h.q.post), Options{DataDir: h.dir, Env: func(string) string { return "" },
		Serve: serving.wrap(func(wb *workbench.Workbench) (func(), error) { return cli.ServeReads(wb, h.dir) })})
	w.Resize(fyne.NewSize(1200, 800))
	h.waitFor("the session list", func() bool { return h.ui.sessions != nil && h.q.empty() })
	sock := filepath.Join(h.dir, remote.SocketName)
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("the app does not serve: %v", err)
	}
	closed := false
	stop := closeOnSignal(h.ui.bridge, func() { h.ui.Close(); closed = true }, serving.run, func(int) { t.Error("the fallback exit ran") })
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the app to close", func() bool { return closed })
	for _, name := range []string{remote.SocketName, remote.TokenName} {
		if _, err := os.Stat(filepath.Join(h.dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s left behind after SIGTERM: %v", name, err)
		}
	}
	stop()

	// The fallback: a UI goroutine that never runs the close.
	dir := t.TempDir()
	srvStop, err := remote.Serve(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	stop = closeOnSignal(newBridgeWith(func(func()) {}), func() {}, srvStop, func(code int) { exited <- code })
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(closeGrace + 5*time.Second):
		t.Fatal("the fallback never ran")
	}
	if _, err := os.Stat(filepath.Join(dir, remote.SocketName)); !os.IsNotExist(err) {
		t.Errorf("the fallback left the socket: %v", err)
	}
}

// On SIGTERM the window's size was not saved: Fyne catches the signal too
// and may end the event loop before the app's handler runs. Whatever ends
// the loop, the window closes the UI once it has ended, keeping its size.
func TestWindowSizeIsSavedWhenFyneEndsTheLoopOnASignal(t *testing.T) {
	h := newHarness(t, map[string]string{})
	h.newSession()
	h.win.Resize(fyne.NewSize(1030, 670))
	// Fyne's own handler quits first: the app's close never runs, the
	// loop just ends, and Run goes on.
	h.ui.loopEnded()
	if !h.ui.closed {
		t.Fatal("the UI was not closed after the loop ended")
	}
	h.ui.loopEnded() // and twice is harmless
	h2 := reopen(t, h)
	if got := h2.ui.windowSize(); got != fyne.NewSize(1030, 670) {
		t.Errorf("relaunched at %v, want 1030x670", got)
	}
}
