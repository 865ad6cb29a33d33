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

	f := h.ui.newSettingsForm()
	form := f.profiles.showForm(nil)
	test.Type(form.name, "Bad Name")
	test.Type(form.baseURL, local.URL())
	form.submit()
	if !form.problem.Visible() || !strings.Contains(form.problem.Text, "is not a name") {
		t.Fatalf("a bad name: %q", form.problem.Text)
	}
	form.name.SetText("local")
	form.model.SetText("qwen3-8b")
	form.submit()
	if form.problem.Visible() || len(f.saved.Profiles) != 1 {
		t.Fatalf("the profile was not kept: %q %+v", form.problem.Text, f.saved.Profiles)
	}
	if !strings.Contains(f.result.Text, "Profile local is ready") {
		t.Errorf("result %q", f.result.Text)
	}
	f.profiles.def.SetSelected("local")
	f.profiles.roles[workbench.RoleSummaries].profile.SetSelected("local")
	f.profiles.roles[workbench.RoleSummaries].model.SetText("qwen3-0.6b")
	if !f.save() {
		t.Fatalf("save refused: %s", f.result.Text)
	}
	var got workbench.Settings
	h.waitFor("the settings to be stored", func() bool { got = h.ui.wb.Settings(); return len(got.Profiles) == 1 })
	if got.Profile != "local" || got.Roles[workbench.RoleSummaries] != (workbench.RoleModel{Profile: "local", Model: "qwen3-0.6b"}) {
		t.Errorf("stored default %q, roles %+v", got.Profile, got.Roles)
	}
	g := h.ui.newSettingsForm()
	if g.profiles.def.Selected != "local" || g.profiles.roles[workbench.RoleSummaries].model.Text != "qwen3-0.6b" || len(g.profiles.rows.Objects) != 1 {
		t.Errorf("the reopened form: default %q, rows %d", g.profiles.def.Selected, len(g.profiles.rows.Objects))
	}
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
		if sel, ok := c.(*widget.Select); ok && len(sel.Options) == 2 && sel.Options[0] == mainChoice {
			chosen = sel.Selected
		}
		return true
	})
	if chosen != "local" {
		t.Fatalf("the New session dialog offers the endpoint %q; want the default profile", chosen)
	}
	h.ui.createSessionIn(t.TempDir(), "on local", false, "local")
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
