package agent

import "github.com/tally-dev/tally/engine/prompt"

// checkDrift compares the prefix about to be sent with the last one sent.
// A change is published as an EventDrift saying which section or tool
// drifted, where, and whether it was booked, and returned for the ledger.
func (t *turnLoop) checkDrift() *prompt.Drift {
	s := t.s
	if s.fp.Combined == s.sentFP.Combined {
		return nil
	}
	d := prompt.Diff(s.sentFP, s.fp, s.sentSystem, s.st.System)
	if s.booked != "" {
		d.Booked, d.Reason = true, s.booked
	}
	s.booked = ""
	s.sentFP, s.sentSystem = s.fp, s.st.System
	s.emit(Event{Kind: EventDrift, Drift: &d, Reason: d.String()})
	return &d
}
