package ui

import (
	"fmt"

	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/ui/settings"
)

// A language server that stops for good (it failed again after its one
// restart, hung or refused to start) is told once per session in the
// banner, with a button that opens its log. The servers' states are read
// when a turn ends — the status never waits — rather than by a timer.

// noteServerFailures shows the banner for the servers of the shown
// session live that failed since the last look; each is told once.
func (u *UI) noteServerFailures(live *liveSession) {
	if u.live != live || live.sess == nil {
		return
	}
	var fresh []lsp.ServerStatus
	for _, st := range live.sess.LanguageServers().Status() {
		if st.State != lsp.StateFailed || live.lspTold[st.Name] {
			continue
		}
		if live.lspTold == nil {
			live.lspTold = map[string]bool{}
		}
		live.lspTold[st.Name] = true
		fresh = append(fresh, st)
	}
	if len(fresh) == 0 {
		return
	}
	msg, logPath := serverFailure(fresh)
	u.banner.ShowAction(msg, "Open log", func() { u.openFile(logPath) })
}

// serverFailure is the banner's sentence for failed servers (the first
// named, with its reason; the others counted) and the log its button
// opens.
func serverFailure(failed []lsp.ServerStatus) (msg, logPath string) {
	st := failed[0]
	reason := settings.ServerReason(st)
	if reason == "" {
		reason = "no reason was given"
	}
	msg = fmt.Sprintf("The %s language server stopped: %s.", st.Name, reason)
	if n := len(failed) - 1; n > 0 {
		msg += fmt.Sprintf(" %s stopped too; Settings lists them.", text.Plural(n, "other server"))
	}
	return msg, st.LogPath
}
