package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/internal/text"
)

// Workspace skills in the app: a workspace that ships skills not trusted
// yet raises a banner when its session opens; Review… shows each skill's
// name, description and file before the user trusts them, for sessions
// created from then on.

// showSkillsTrust raises the banner of untrusted workspace skills, unless
// another banner is up.
func (u *UI) showSkillsTrust(live *liveSession) {
	if u.wb == nil || live == nil || live.info.workspace == "" {
		return
	}
	wb, ws := u.wb, live.info.workspace
	u.bridge.Work(func() func() {
		cat, err := wb.Skills(ws)
		return func() {
			if err != nil || cat.Withheld == 0 || u.live != live || u.banner.Text() != "" {
				return
			}
			u.banner.ShowAction(fmt.Sprintf("This workspace ships %s that %s not trusted yet, so sessions do not offer them.",
				text.Plural(cat.Withheld, "skill"), map[bool]string{true: "is", false: "are"}[cat.Withheld == 1]),
				"Review…", func() { u.reviewSkills(ws, cat) })
		}
	})
}

// reviewSkills shows the workspace's skills and trusts them on request.
func (u *UI) reviewSkills(ws string, cat skill.Catalog) {
	var b strings.Builder
	for _, s := range cat.WorkspaceSkills {
		fmt.Fprintf(&b, "%s — %s\n  %s\n\n", s.Name, s.Description, s.Path)
	}
	body := &widget.Entry{MultiLine: true, Wrapping: fyne.TextWrapWord, Text: strings.TrimSpace(b.String())}
	note := &widget.Label{Wrapping: fyne.TextWrapWord, Text: "A repository can ship skills: their instructions reach the model when it loads them. " +
		"Trust them only if you would follow them yourself. Trust is kept for this exact content; any change asks again."}
	var d *dialog.CustomDialog
	trust := &widget.Button{Text: "Trust these skills", Importance: widget.HighImportance, OnTapped: func() {
		d.Hide()
		wb := u.wb
		u.bridge.Work(func() func() {
			err := wb.TrustSkills(ws, cat.WorkspaceHash)
			return func() {
				if err != nil {
					u.banner.ShowError("Could not trust the workspace's skills: " + err.Error())
					return
				}
				u.banner.ShowInfo("Trusted. Sessions created from now on offer these skills.")
			}
		})
	}}
	d = dialog.NewCustomWithoutButtons("Skills of "+ws, container.NewBorder(note, nil, nil, nil, container.NewScroll(body)), u.win)
	d.SetButtons([]fyne.CanvasObject{&widget.Button{Text: "Not now", OnTapped: func() { d.Hide() }}, trust})
	d.Resize(fyne.NewSize(min(760, u.win.Canvas().Size().Width-40), min(520, u.win.Canvas().Size().Height-40)))
	d.Show()
}
