package ui

import (
	"strings"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/ui/extensions"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Hooks in the app: a hook that blocked, refused or failed raises a
// banner saying so; a workspace that ships .tally/hooks.json asks for
// trust, showing what it would run; Settings → Hooks lists every hook with
// its last run (package ui/extensions draws them).

// hookTrustText is the banner of an untrusted workspace hooks file.
const hookTrustText = "This workspace ships hooks (.tally/hooks.json) that are not trusted yet, so they do not run."

// showHookTrust raises the trust banner of live's untrusted workspace
// hooks file, unless another banner is up (force shows it anyway).
func (u *UI) showHookTrust(live *liveSession, force bool) {
	if u.live != live || live.sess == nil {
		return
	}
	wf := live.sess.Hooks().Status().Workspace // never waits for a turn
	if !wf.NeedsTrust || (!force && u.banner.Text() != "") {
		return
	}
	u.banner.ShowAction(hookTrustText, "Review…", func() { u.reviewHooksTrust(live, wf) })
}

// onHook shows a hook event: the trust banner for an untrusted workspace
// file, an error banner for a hook that blocked, refused or failed, and a
// note for the others (a changed call, a Stop hook that made the agent go
// on).
func (u *UI) onHook(live *liveSession, e agent.Event) {
	if u.live != live {
		return
	}
	switch {
	case live.sess != nil && strings.Contains(e.Err, "tally hooks trust") && live.sess.Hooks().Status().Workspace.NeedsTrust:
		u.showHookTrust(live, true)
	case e.Err != "":
		u.banner.ShowError(tw.UpperFirst(text.OneLine(e.Err, 400)) + ".")
	case e.Reason != "":
		u.banner.ShowInfo(tw.UpperFirst(text.OneLine(e.Reason, 400)) + ".")
	}
}

// reviewHooksTrust shows what a workspace's hooks file would run and
// trusts it on request; the session is then opened again so its hooks
// run.
func (u *UI) reviewHooksTrust(live *liveSession, wf hooks.WorkspaceFile) {
	wb, ws := u.wb, live.info.workspace
	extensions.ReviewHooks(u.extensionHost(), wf, func() error { return wb.TrustHooks(ws, wf.Hash) }, func() { u.restartSession(live) })
}

// showHooksSettings opens the Hooks dialog: the hooks of the shown
// session's workspace, with its last runs.
func (u *UI) showHooksSettings() {
	sess, ws := u.shownSession()
	live, wb := u.live, u.wb // the session the listing is made for
	var review func(hooks.WorkspaceFile)
	if live != nil {
		review = func(wf hooks.WorkspaceFile) { u.reviewHooksTrust(live, wf) }
	}
	extensions.ShowHooks(u.extensionHost(), func() (workbench.HooksListing, error) { return wb.Hooks(ws, sess) }, review)
}
