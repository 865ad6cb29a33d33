package ui

import (
	"fmt"
	"strings"

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
	wb := u.wb
	u.reviewTrust(trustReview{
		title: "Skills of " + ws, body: strings.TrimSpace(b.String()), button: "Trust these skills",
		note: "A repository can ship skills: their instructions reach the model when it loads them. " +
			"Trust them only if you would follow them yourself. Trust is kept for this exact content; any change asks again.",
		trust:  func() error { return wb.TrustSkills(ws, cat.WorkspaceHash) },
		failed: "Could not trust the workspace's skills",
		done:   func() { u.banner.ShowInfo("Trusted. Sessions created from now on offer these skills.") },
	})
}
