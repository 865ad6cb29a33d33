package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	"github.com/tally-dev/tally/ui/settings"
)

// twoEndpoints is the app on a main endpoint answering "from main", with
// a second scripted server, answering "from local", to make a profile of.
func twoEndpoints(t *testing.T) (h *harness, main, local *llmtest.Server) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	main = llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Text("from main") }))
	t.Cleanup(main.Close)
	local = llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Text("from local") }))
	t.Cleanup(local.Close)
	return newHarness(t, endpoint(main)), main, local
}

// Settings adds an endpoint profile through its form (which says what is
// wrong and stays open), makes it the default and gives a role a model;
// /model @PROFILE NAME then switches the open session to it, and the next
// turn goes to the profile's server.
func TestSettingsAddsAProfileAndModelSwitchesToIt(t *testing.T) {
	h, _, local := twoEndpoints(t)
	h.newSession()
	h.send("hello")
	h.waitIdle()

	f := openSettingsDialog(h)
	test.Tap(buttonIn(f.row("Endpoint profiles"), "Add profile…"))
	name := entryWith(h, "local")
	test.Type(name, "Bad Name")
	test.Type(entryWith(h, "http://127.0.0.1:8080/v1"), local.URL())
	test.Tap(buttonIn(h.win.Canvas().Overlays().Top(), "Add"))
	if entryWith(h, "local") == nil || !h.overlayShows("is not a name") {
		t.Fatal("a bad name closed the form or was not explained")
	}
	name.SetText("local")
	entryWith(h, "qwen3-8b (optional)").SetText("qwen3-8b")
	test.Tap(buttonIn(h.win.Canvas().Overlays().Top(), "Add"))
	if entryWith(h, "local") != nil || !f.says("local — qwen3-8b at ") {
		t.Fatal("the profile was not kept")
	}
	if !f.says("Profile local is ready") {
		t.Error("the settings do not say the profile is ready")
	}
	f.profileChoice("New sessions start on").SetSelected("local")
	f.profileChoice("Summaries").SetSelected("local")
	f.roleModel("Summaries").SetText("qwen3-0.6b")
	if !f.save() {
		t.Fatal("save refused")
	}
	var got workbench.Settings
	h.waitFor("the settings to be stored", func() bool { got = h.ui.wb.Settings(); return len(got.Profiles) == 1 })
	if got.Profile != "local" || got.Roles[workbench.RoleSummaries] != (workbench.RoleModel{Profile: "local", Model: "qwen3-0.6b"}) {
		t.Errorf("stored default %q, roles %+v", got.Profile, got.Roles)
	}
	g := openSettingsDialog(h)
	rows := countButtons(g.row("Endpoint profiles"), "Remove")
	if g.profileChoice("New sessions start on").Selected != "local" || g.roleModel("Summaries").Text != "qwen3-0.6b" || rows != 1 {
		t.Errorf("the reopened form: default %q, rows %d", g.profileChoice("New sessions start on").Selected, rows)
	}
	test.Tap(buttonIn(h.win.Canvas().Overlays().Top(), "Cancel"))
	h.waitFor("the session to reconnect", func() bool { return h.ui.live != nil && h.ui.live.sess != nil && !h.ui.live.job.running })

	typeCommand(h, "/model @local qwen3-8b")
	h.waitFor("the switch", func() bool {
		return strings.Contains(h.ui.banner.Text(), "This session now talks to qwen3-8b on local")
	})
	h.send("and now?")
	h.waitIdle()
	if reqs := local.Requests(); len(reqs) != 1 || reqs[0].Model != "qwen3-8b" || !strings.Contains(string(reqs[0].Body), "hello") {
		t.Fatalf("the profile's server got %d requests; want the next turn with the whole conversation", len(reqs))
	}
	if !strings.HasPrefix(h.ui.footer.Text(), "qwen3-8b") {
		t.Errorf("the footer shows %q", h.ui.footer.Text())
	}
	typeCommand(h, "/model @nope x")
	h.waitFor("the refusal", func() bool { return strings.Contains(h.ui.banner.Text(), "The model stays qwen3-8b") })
}

// With profiles saved, the New session dialog offers the endpoint (the
// default profile first) and the session starts on the one chosen.
func TestNewSessionDialogChoosesTheEndpoint(t *testing.T) {
	h, main, local := twoEndpoints(t)
	s, err := h.ui.wb.Settings().PutProfile(workbench.Profile{Name: "local", BaseURL: local.URL(), Model: "qwen3-8b"})
	if err != nil {
		t.Fatal(err)
	}
	s.Profile = "local"
	if err := h.ui.wb.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
	h.ui.settings = h.ui.wb.Settings()
	h.ui.sessions.showNew()
	var chosen string
	fynetest.Walk(h.win.Canvas().Overlays().Top(), func(c fyne.CanvasObject) bool {
		if sel, ok := c.(*widget.Select); ok && len(sel.Options) == 2 && sel.Options[0] == settings.MainChoice {
			chosen = sel.Selected
		}
		return true
	})
	if chosen != "local" {
		t.Fatalf("the New session dialog offers the endpoint %q; want the default profile", chosen)
	}
	h.ui.createSessionIn(t.TempDir(), "on local", false, "local", nil)
	h.waitFor("the session", func() bool { return h.ui.live != nil && h.ui.live.sess != nil })
	h.send("hello")
	h.waitIdle()
	if len(local.Requests()) != 1 || len(main.Requests()) != 0 {
		t.Errorf("requests: local %d, main %d; want the session on local", len(local.Requests()), len(main.Requests()))
	}
	if p := h.ui.live.sess.Snapshot().Meta.Profile; p != "local" {
		t.Errorf("the session is on %q", p)
	}
}
