package ui

import (
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Hooks in the app: a hook that blocked, refused or failed raises a
// banner saying so; a workspace that ships .tally/hooks.json asks for
// trust, showing what it would run; Settings → Hooks lists every hook with
// its last run (see hooks_settings.go).

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
	u.reviewTrust(trustReview{
		title: "Hooks of " + wf.Path, body: hooksPreview(wf.Preview), button: "Trust and run them",
		note: "A repository can ship this file: trust it only if you would run these commands yourself. " +
			"They run sandboxed like the agent's commands, without asking, at the events shown. Trust is kept for this exact content and the scripts it names; any change asks again.",
		trust:  func() error { return wb.TrustHooks(ws, wf.Hash) },
		failed: "Could not trust the workspace's hooks file",
		done: func() {
			u.banner.ShowInfo("Trusted. The session runs the workspace's hooks from now on.")
			u.restartSession(live)
		},
	})
}

// hooksPreview lists hooks one a paragraph: the event and matcher, then
// the command and its time limit.
func hooksPreview(list []hooks.Hook) string {
	var b strings.Builder
	for _, h := range list {
		fmt.Fprintf(&b, "%s\n  runs %s\n  for at most %s\n\n", hookTitle(h), h.Command, h.Limit())
	}
	return strings.TrimSpace(b.String())
}

// hookTitle is "PreToolUse on run_shell|edit_file", or the event alone
// when its hooks apply to everything.
func hookTitle(h hooks.Hook) string {
	m := strings.TrimSpace(h.Matcher)
	if m == "" || m == "*" || h.Event == hooks.UserPromptSubmit || h.Event == hooks.Stop {
		return string(h.Event)
	}
	return fmt.Sprintf("%s on %s", h.Event, m)
}
