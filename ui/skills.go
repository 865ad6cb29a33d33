package ui

import (
	"fmt"

	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/ui/extensions"
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
				"Review…", func() {
					extensions.ReviewSkills(u.extensionHost(), ws, cat, func() error { return wb.TrustSkills(ws, cat.WorkspaceHash) })
				})
		}
	})
}
