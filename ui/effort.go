package ui

import (
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/workbench"
)

// The reasoning effort of the shown session and its roles (the selects of
// the Model and effort dialog, the footer's part), and a fallback's note
// in the chat and the footer.

// previewTokens is the context the fallback chain's preview prices when
// no session is shown: a mid-sized coding session.
const previewTokens = 50_000

// effortSelects returns a select per role of the effort (the session's
// first) set to the levels now in force, for the Model and effort dialog.
func effortSelects(now map[string]chat.Effort) (roles []string, selects []*widget.Select) {
	var names []string
	for _, e := range workbench.EffortLevels() {
		names = append(names, e.String())
	}
	roles = append([]string{workbench.EffortSession}, workbench.RoleNamesInOrder()...)
	for _, r := range roles {
		s := widget.NewSelect(names, nil)
		s.SetSelected(now[r].String())
		selects = append(selects, s)
	}
	return roles, selects
}

// applyEfforts records each level of selects that differs from now, off
// the UI goroutine, and shows the result on the footer (or the error in
// the banner); the change applies from the session's next request.
func (u *UI) applyEfforts(live *liveSession, now map[string]chat.Effort, roles []string, selects []*widget.Select) {
	changed := map[string]chat.Effort{}
	for i, r := range roles {
		if e, err := workbench.ParseEffort(selects[i].Selected); err == nil && e != now[r] {
			changed[r] = e
		}
	}
	if len(changed) == 0 {
		return
	}
	wb, id := u.wb, live.id
	u.bridge.Work(func() func() {
		var err error
		for r, e := range changed {
			if err == nil {
				err = wb.SetEffort(id, r, e)
			}
		}
		line := workbench.EffortLine(wb.Efforts(id))
		return func() {
			live.effort = line
			if u.live == live {
				u.footer.State.Effort = live.effort
				u.footer.Update()
			}
			if err != nil {
				u.banner.ShowError("The effort stays as it was: " + err.Error())
				return
			}
			u.banner.ShowInfo("Reasoning effort " + line + " from the next request on; nothing already sent changes.")
		}
	})
}

// fellBack is the footer's fallback part after row: "→ model" when a
// fallback, not the session's model, answered it.
func fellBack(row ledger.Row, model string) string {
	if row.Model == "" || row.Model == model {
		return ""
	}
	return "to " + row.Model
}

// onFallback says in the chat and the footer that the turn goes on with
// the next model of the fallback chain, switch ("old → new"), and why.
func (u *UI) onFallback(change, reason string) {
	u.footer.ClearRetry()
	u.footer.State.Fallback = change
	u.footer.Update()
	u.chat.Notice("The endpoint failed for good ("+reason+"), so this turn goes on with the fallback: "+change+
		". Its cache starts empty: the next request is billed at its miss price.", false)
}
