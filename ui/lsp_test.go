package ui

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	"github.com/tally-dev/tally/ui/rewind"
	"github.com/tally-dev/tally/ui/settings"
)

// urlApp records the URLs the window asks the desktop to open.
type urlApp struct {
	fyne.App
	mu     sync.Mutex
	opened []string
}

// OpenURL implements fyne.App.
func (a *urlApp) OpenURL(u *url.URL) error {
	a.mu.Lock()
	a.opened = append(a.opened, u.String())
	a.mu.Unlock()
	return nil
}

// recordURLs makes the window's app record the URLs it opens.
func recordURLs(h *harness) *urlApp {
	a := &urlApp{App: h.ui.app}
	h.ui.app = a
	return a
}

// lspSession opens the window on a session of a workspace holding files
// (name → content), with the fake language servers (name → mode).
func lspSession(t *testing.T, srv *llmtest.Server, servers map[string]string, files map[string]string) (*harness, string) {
	t.Helper()
	useFakeServers(t, servers)
	h := newHarness(t, endpoint(srv))
	ws := filepath.Join(h.dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		writeFile(t, ws, name, content)
	}
	h.newSession()
	return h, ws
}

// serverState waits until the shown session's server name is in state.
func serverState(h *harness, name string, state lsp.State) lsp.ServerStatus {
	h.t.Helper()
	var got lsp.ServerStatus
	h.waitFor("server "+name+" to be "+string(state), func() bool {
		for _, st := range h.ui.live.sess.LanguageServers().Status() {
			if st.Name == name && st.State == state {
				got = st
				return true
			}
		}
		return false
	})
	return got
}

// With a session, Settings shows its servers' live states, and Open log
// opens a running server's log.
func TestSettingsShowsLiveLanguageServerStates(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Call("read_file", `{"path":"a.fake"}`), llmtest.Text("read")))
	defer srv.Close()
	h, _ := lspSession(t, srv, map[string]string{"fake": "ok"}, map[string]string{"a.fake": "fine\n"})
	urls := recordURLs(h)
	h.send("read a.fake")
	h.waitIdle()
	st := serverState(h, "fake", lsp.StateRunning)
	d := openSettingsDialog(h)
	openLog := func() *widget.Button { return buttonIn(d.lspRows().Objects[0], "Open log") }
	h.waitFor("the live states", func() bool { return openLog() != nil })
	// The built-in servers the fake setup turned off follow, disabled.
	if rows := rowTexts(d.lspRows()); len(rows) != 1+len(lsp.Defaults()) || rows[0] != "fake|fake|running" || !strings.HasSuffix(rows[1], "|disabled") {
		t.Errorf("rows %q", rows)
	}
	if !d.says("States of the servers of the shown session's folder.") {
		t.Error("the note does not say whose states these are")
	}
	test.Tap(openLog())
	want := (&url.URL{Scheme: "file", Path: st.LogPath}).String()
	if st.LogPath == "" || !slices.Equal(urls.opened, []string{want}) {
		t.Errorf("Open log opened %q, want %q", urls.opened, want)
	}
}

// The Changes view shows each changed file's current errors and warnings
// from the language servers: a count badge and the list.
func TestChangesViewShowsDiagnostics(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"a.fake","content":"fine\nBAD line\n  WARN here\nHINT only\n"}`),
		llmtest.Call("write_file", `{"path":"clean.fake","content":"all fine\n"}`),
		llmtest.Call("write_file", `{"path":"notes.txt","content":"BAD but no server\n"}`),
		llmtest.Text("done"),
	))
	defer srv.Close()
	h, _ := lspSession(t, srv, map[string]string{"fake": "ok"}, map[string]string{"seed.fake": "x\n"})
	h.ui.head.perm.mode.SetSelected("Auto-edit")
	h.waitFor("auto-edit", func() bool { return string(h.ui.live.sess.Permissions().Mode()) == "auto-edit" })
	h.send("write the files")
	h.waitIdle()
	test.Tap(h.ui.actions.changes)
	v := waitShown[*rewind.Changes](h, "the Changes view")
	badge := func(path string) *widget.Label { b, _ := changedFile(t, v, path); return b }
	h.waitFor("the diagnostics", func() bool {
		return badge("a.fake").Text != "checking…" && badge("a.fake").Text != ""
	})
	if b := badge("a.fake"); b.Text != "1 error · 1 warning" || b.Importance != widget.DangerImportance || !b.Visible() {
		t.Errorf("a.fake badge %q (importance %v, visible %v)", b.Text, b.Importance, b.Visible())
	}
	h.waitFor("clean.fake", func() bool { return badge("clean.fake").Text != "checking…" })
	if b := badge("clean.fake"); b.Text != "no errors or warnings" || b.Importance != widget.SuccessImportance {
		t.Errorf("clean.fake badge %q (importance %v)", b.Text, b.Importance)
	}
	if b := badge("notes.txt"); b.Visible() {
		t.Errorf("a file no server handles has the badge %q", b.Text)
	}
	_, acc := changedFile(t, v, "a.fake")
	if !acc.Visible() || acc.Title() != "Errors and warnings (2)" || acc.IsOpen() {
		t.Fatalf("a.fake list: visible %v, title %q, open %v", acc.Visible(), acc.Title(), acc.IsOpen())
	}
	var lines []string
	for _, o := range acc.Body.(*fyne.Container).Objects {
		lines = append(lines, o.(*widget.Label).Text)
	}
	if want := []string{"2:1 error BAD is not allowed", "3:3 warning WARN is not allowed"}; !slices.Equal(lines, want) {
		t.Errorf("a.fake lines %q, want %q", lines, want)
	}
	if _, clean := changedFile(t, v, "clean.fake"); clean.Visible() {
		t.Error("a clean file shows an empty list")
	}
	test.Tap(acc.Toggle)
	if !h.overlayShows("2:1 error BAD is not allowed") {
		t.Error("the opened list is not drawn in the dialog")
	}
}

// A server that fails after its restart is told once in the banner, with
// a button that opens its log; the next turns do not repeat it.
func TestFailedLanguageServerBannerOnce(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("read_file", `{"path":"a.crashy"}`), llmtest.Text("read"),
		llmtest.Text("second"), llmtest.Text("third"),
	))
	defer srv.Close()
	h, _ := lspSession(t, srv, map[string]string{"crashy": "crash"}, map[string]string{"a.crashy": "x\n"})
	urls := recordURLs(h)
	h.send("read it")
	h.waitIdle()
	st := serverState(h, "crashy", lsp.StateFailed)
	if !strings.HasPrefix(h.ui.banner.Text(), "The crashy language server stopped: ") {
		h.send("again") // it failed after the first turn ended: the next end tells
		h.waitIdle()
	}
	msg := h.ui.banner.Text()
	if !strings.HasPrefix(msg, "The crashy language server stopped: ") || !strings.Contains(msg, settings.ServerReason(st)+".") {
		t.Fatalf("banner %q, reason %q", msg, st.Reason)
	}
	b := buttonIn(h.ui.banner, "Open log")
	if b == nil || !b.Visible() {
		t.Fatal("the banner has no Open log button")
	}
	test.Tap(b)
	if want := (&url.URL{Scheme: "file", Path: st.LogPath}).String(); !slices.Equal(urls.opened, []string{want}) {
		t.Errorf("Open log opened %q, want %q", urls.opened, want)
	}
	h.send("once more")
	h.waitIdle()
	if strings.Contains(h.ui.banner.Text(), "crashy") {
		t.Errorf("the failure was told again: %q", h.ui.banner.Text())
	}
}

// The banner's sentence for failed language servers.
func TestLanguageServerFailureSentence(t *testing.T) {
	msg, log := serverFailure([]lsp.ServerStatus{
		{Name: "gopls", Reason: "it stopped again after its restart (exit status 2); see /l/gopls.log.", LogPath: "/l/gopls.log"},
		{Name: "pyright"}, {Name: "clangd"}})
	if msg != "The gopls language server stopped: it stopped again after its restart (exit status 2); see /l/gopls.log. 2 other servers stopped too; Settings lists them." || log != "/l/gopls.log" {
		t.Errorf("banner %q, log %q", msg, log)
	}
}

// rowTexts are the section's rows as "name|handles|state", with " — reason"
// when a reason is shown.
func rowTexts(rows *fyne.Container) []string {
	var out []string
	for _, r := range rows.Objects {
		var name, handles, state, reason string
		fynetest.Walk(r, func(o fyne.CanvasObject) bool {
			switch l, ok := o.(*widget.Label); {
			case !ok:
			case l.TextStyle.Bold:
				name = l.Text
			case l.Truncation != fyne.TextTruncateOff:
				handles = l.Text
			case l.Wrapping != fyne.TextWrapOff:
				reason = " — " + l.Text
			default:
				state = l.Text
			}
			return true
		})
		if name != "" {
			out = append(out, name+"|"+handles+"|"+state+reason)
		}
	}
	return out
}

// changedFile finds the badge of path in the Changes view v and, under
// its diff, the list of its errors and warnings: each file is its head
// (the path, then the badge and Revert), its diff and that list.
func changedFile(t *testing.T, v fyne.CanvasObject, path string) (badge *widget.Label, list *rewind.Fold) {
	t.Helper()
	fynetest.Walk(v, func(o fyne.CanvasObject) bool {
		box, ok := o.(*fyne.Container)
		if badge != nil || !ok || len(box.Objects) != 3 {
			return badge == nil
		}
		head, ok := box.Objects[0].(*fyne.Container)
		acc, isList := box.Objects[2].(*rewind.Fold)
		if !ok || !isList || len(head.Objects) != 2 {
			return true
		}
		if l, ok := head.Objects[0].(*widget.Label); ok && l.Text == path {
			badge, list = head.Objects[1].(*fyne.Container).Objects[0].(*widget.Label), acc
		}
		return badge == nil
	})
	if badge == nil {
		t.Fatalf("the Changes view has no file %s", path)
	}
	return badge, list
}
