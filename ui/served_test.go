package ui

import (
	"bytes"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/cli"
	"github.com/tally-dev/tally/engine/workbench"
)

// With the app open, every command line command used to fail with
// "already open by another Tally" (issue 12 #15): reading commands run
// inside the app, writing commands say the app holds the session.
func TestCommandLineReadsWhileTheAppIsOpen(t *testing.T) {
	a := test.NewTempApp(t)
	w := test.NewTempWindow(t, widget.NewLabel(""))
	h := &harness{t: t, win: w, q: &queue{}, dir: t.TempDir()}
	env := map[string]string{}
	h.ui = New(a, w, newBridgeWith(h.q.post), Options{DataDir: h.dir, Env: func(k string) string { return env[k] },
		Serve: func(wb *workbench.Workbench) (func(), error) { return cli.ServeReads(wb, h.dir) }})
	w.Resize(fyne.NewSize(1200, 800))
	t.Cleanup(func() { h.ui.Close() })
	h.waitFor("the session list", func() bool { return h.ui.sessions != nil && h.q.empty() })
	h.newSession()
	id := h.ui.live.id

	var out, errb bytes.Buffer
	if code := cli.Main([]string{"sessions", "--data", h.dir}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), id) {
		t.Errorf("tally sessions while the app is open: exit %d, out %q, stderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := cli.Main([]string{"export", "--data", h.dir, id}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Errorf("tally export while the app is open: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code := cli.Main([]string{"run", "--data", h.dir, "--session", id, "hello"}, strings.NewReader(""), &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "the Tally app has this data open") {
		t.Errorf("a writing command: exit %d, stderr %q", code, errb.String())
	}
	// The app's store is still open and working after serving.
	if _, err := h.ui.wb.Sessions(); err != nil {
		t.Errorf("serving closed the app's store: %v", err)
	}
}
