package ui

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/storage"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// The store-error view's Retry used to build a second UI while the
// window's close handler still held the first: the store the retry opened
// was never closed (and a running turn never cancelled). Retry now starts
// the same UI again, so closing it releases the store.
func TestRetryAfterALockedStoreOpensIntoTheSameUI(t *testing.T) {
	dir := t.TempDir()
	other, err := storage.Open(filepath.Join(dir, "tally.db"), storage.Options{Timeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	q := &queue{}
	u := New(a, w, newBridgeWith(q.post), Options{DataDir: dir, Env: func(string) string { return "" }})
	if u.wb != nil {
		t.Fatal("the store opened while another handle held it")
	}
	var retry *widget.Button
	fynetest.Walk(w.Content(), func(o fyne.CanvasObject) bool {
		if b, ok := o.(*widget.Button); ok && b.Text == "Retry" {
			retry = b
		}
		return true
	})
	if retry == nil {
		t.Fatal("the store-error view has no Retry button")
	}
	other.Close()
	test.Tap(retry)
	q.drain()
	if u.wb == nil {
		t.Fatal("Retry did not open the store into the UI the window holds")
	}
	u.Close()
	again, err := storage.Open(filepath.Join(dir, "tally.db"), storage.Options{Timeout: -1})
	if err != nil {
		t.Fatalf("closing the window's UI did not release the store the retry opened: %v", err)
	}
	again.Close()
}

func TestMissingDisplayIsAClearError(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	err := displayAvailable(env(nil))
	if runtime.GOOS == "linux" && (err == nil || !strings.Contains(err.Error(), "tally run")) {
		t.Errorf("no display: %v", err)
	}
	if err := displayAvailable(env(map[string]string{"DISPLAY": ":0"})); err != nil {
		t.Errorf("with DISPLAY: %v", err)
	}
	if err := displayAvailable(env(map[string]string{"WAYLAND_DISPLAY": "wayland-0"})); err != nil {
		t.Errorf("with WAYLAND_DISPLAY: %v", err)
	}
}
