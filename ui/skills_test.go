package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// A workspace that ships skills raises a banner whose Review… trusts
// them; sessions created afterwards offer them.
func TestWorkspaceSkillsAskForTrust(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("ok")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	ws := h.ui.live.info.workspace
	dir := filepath.Join(ws, ".claude", "skills", "ship")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: ship\ndescription: Ship a release.\n---\nRun make release."), 0o644); err != nil {
		t.Fatal(err)
	}
	h.ui.banner.Hide()
	h.ui.showSkillsTrust(h.ui.live)
	h.waitFor("the skills banner", func() bool { return strings.Contains(h.ui.banner.Text(), "ships 1 skill that is not trusted") })
	test.Tap(buttonIn(h.ui.banner, "Review…"))
	h.waitFor("the review", func() bool { return h.overlayShows("ship — Ship a release.") })
	test.Tap(buttonIn(h.ui.win.Canvas().Overlays().Top(), "Trust these skills"))
	h.waitFor("the trust", func() bool { return strings.Contains(h.ui.banner.Text(), "Trusted.") })
	cat, err := h.ui.wb.Skills(ws)
	if err != nil || cat.Withheld != 0 || len(cat.Skills) != 1 || cat.Skills[0].Name != "ship" {
		t.Fatalf("after trust: %+v, %v", cat, err)
	}
}
