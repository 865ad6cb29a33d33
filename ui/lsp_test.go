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

// Without a session, Settings lists the configured servers from the
// user's file over the built-in ones, the disabled ones last, and says
// where they are kept.
func TestSettingsListsConfiguredLanguageServers(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	writeLSPConfig(t, cfg, map[string]any{"servers": map[string]any{
		"clangd":  map[string]any{"disabled": true},
		"zigls":   map[string]any{"command": "no-such-zig-server", "extensions": []string{".zig"}, "languages": []string{"zig"}},
		"mytools": map[string]any{"command": os.Args[0], "extensions": []string{".my"}},
	}})
	h := newHarness(t, map[string]string{})
	f := h.ui.openSettings()
	h.waitFor("the language servers", func() bool { return len(f.lsp.rows.Objects) > 1 })
	rows := rowTexts(f.lsp.rows)
	for _, want := range []string{"gopls|go|", "zigls|zig|not installed — no-such-zig-server is not on the PATH", "mytools|.my|not started yet", "clangd|c, cpp|disabled"} {
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, want) }) {
			t.Errorf("no row %q in %q", want, rows)
		}
	}
	if i := slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, "clangd") }); i != len(rows)-1 {
		t.Errorf("the disabled clangd is not listed last: %q", rows)
	}
	path, _ := lsp.UserPath()
	for _, want := range []string{path, `"command"`, `"args"`, `"extensions"`, `"languages"`, `"init_options"`, `"disabled"`} {
		if !strings.Contains(f.lsp.where.Text, want) {
			t.Errorf("the file line %q does not name %s", f.lsp.where.Text, want)
		}
	}
	if len(f.lsp.logs) != 0 {
		t.Errorf("servers that never ran have Open log buttons: %v", f.lsp.logs)
	}
}

// A broken lsp.json is said in the section, which lists the built-in
// servers the sessions then use.
func TestSettingsSaysTheLanguageServerFileIsBroken(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	writeLSPConfig(t, cfg, map[string]any{"servers": map[string]any{"x": map[string]any{"comand": "typo"}}})
	h := newHarness(t, map[string]string{})
	f := h.ui.openSettings()
	h.waitFor("the language servers", func() bool { return len(f.lsp.rows.Objects) > 1 })
	if !f.lsp.note.Visible() || !strings.Contains(f.lsp.note.Text, "is not valid") || !strings.Contains(f.lsp.note.Text, "built-in servers") {
		t.Errorf("note %q (visible %v)", f.lsp.note.Text, f.lsp.note.Visible())
	}
	if rows := rowTexts(f.lsp.rows); len(rows) != len(lsp.Defaults()) {
		t.Errorf("rows %q, want the %d built-in servers", rows, len(lsp.Defaults()))
	}
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
	f := h.ui.openSettings()
	h.waitFor("the live states", func() bool { return f.lsp.logs["fake"] != nil })
	// The built-in servers the fake setup turned off follow, disabled.
	if rows := rowTexts(f.lsp.rows); len(rows) != 1+len(lsp.Defaults()) || rows[0] != "fake|fake|running" || !strings.HasSuffix(rows[1], "|disabled") {
		t.Errorf("rows %q", rows)
	}
	if !strings.Contains(f.lsp.note.Text, "shown session") {
		t.Errorf("note %q", f.lsp.note.Text)
	}
	test.Tap(f.lsp.logs["fake"])
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
	v := waitShown[*changesView](h, "the Changes view")
	h.waitFor("the diagnostics", func() bool {
		return v.diags.badges["a.fake"].Text != "checking…" && v.diags.badges["a.fake"].Text != ""
	})
	if b := v.diags.badges["a.fake"]; b.Text != "1 error · 1 warning" || b.Importance != widget.DangerImportance || !b.Visible() {
		t.Errorf("a.fake badge %q (importance %v, visible %v)", b.Text, b.Importance, b.Visible())
	}
	h.waitFor("clean.fake", func() bool { return v.diags.badges["clean.fake"].Text != "checking…" })
	if b := v.diags.badges["clean.fake"]; b.Text != "no errors or warnings" || b.Importance != widget.SuccessImportance {
		t.Errorf("clean.fake badge %q (importance %v)", b.Text, b.Importance)
	}
	if b := v.diags.badges["notes.txt"]; b.Visible() {
		t.Errorf("a file no server handles has the badge %q", b.Text)
	}
	acc := v.diags.lists["a.fake"]
	if !acc.Visible() || acc.Items[0].Title != "Errors and warnings (2)" {
		t.Fatalf("a.fake list: visible %v, title %q", acc.Visible(), acc.Items[0].Title)
	}
	var lines []string
	for _, o := range v.diags.bodies["a.fake"].Objects {
		lines = append(lines, o.(*widget.Label).Text)
	}
	if want := []string{"2:1 error BAD is not allowed", "3:3 warning WARN is not allowed"}; !slices.Equal(lines, want) {
		t.Errorf("a.fake lines %q, want %q", lines, want)
	}
	if v.diags.lists["clean.fake"].Visible() {
		t.Error("a clean file shows an empty list")
	}
	acc.Open(0)
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
	if !strings.HasPrefix(msg, "The crashy language server stopped: ") || !strings.Contains(msg, serverReason(st)+".") {
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

// The words of each state, and the banner's sentence.
func TestLanguageServerStateWords(t *testing.T) {
	for _, c := range []struct {
		st            lsp.ServerStatus
		state, reason string
		imp           widget.Importance
	}{
		{lsp.ServerStatus{State: lsp.StateRunning}, "running", "", widget.SuccessImportance},
		{lsp.ServerStatus{State: lsp.StateStarting}, "starting", "", widget.MediumImportance},
		{lsp.ServerStatus{State: lsp.StateStopped, Reason: "not started yet; it starts when a file it handles is synced or queried"}, "not started yet", "", widget.LowImportance},
		{lsp.ServerStatus{State: lsp.StateStopped, Reason: "stopped by the last release"}, "not started yet", "stopped by the last release", widget.LowImportance},
		{lsp.ServerStatus{State: lsp.StateNotInstalled, Reason: "gopls is not on the PATH; install it."}, "not installed", "gopls is not on the PATH; install it", widget.WarningImportance},
		{lsp.ServerStatus{Name: "x", State: lsp.StateFailed, Reason: `the language server "x" crashed twice; see its log`}, "failed", "it crashed twice; see its log", widget.DangerImportance},
	} {
		if state, reason, imp := lspStateText(c.st); state != c.state || reason != c.reason || imp != c.imp {
			t.Errorf("%+v: %q, %q (%v), want %q, %q (%v)", c.st, state, reason, imp, c.state, c.reason, c.imp)
		}
	}
	msg, log := serverFailure([]lsp.ServerStatus{
		{Name: "gopls", Reason: "it stopped again after its restart (exit status 2); see /l/gopls.log.", LogPath: "/l/gopls.log"},
		{Name: "pyright"}, {Name: "clangd"}})
	if got := serverReason(lsp.ServerStatus{Name: "x", Reason: `the language server "x" hung.`}); got != "it hung" {
		t.Errorf("serverReason = %q", got)
	}
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
