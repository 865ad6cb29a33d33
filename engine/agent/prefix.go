package agent

import (
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/tool"
)

// AddTool registers an extra (MCP-style) tool. Extra tools sort after the
// built-ins, so adding one never moves a built-in tool's bytes; it is still
// a change of the prefix and is reported as unbooked drift on the next
// request unless announced.
func (s *Session) AddTool(t tool.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools.AddExtra(t)
	s.resetPrefix()
}

// ActivateTool adds a deferred tool at the very end of the catalog, after
// every tool already offered, so the bytes before it keep hitting the cache.
func (s *Session) ActivateTool(t tool.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools.Activate(t)
	s.resetPrefix()
}

// bookPrefixChange announces that the next prefix change is intended
// (compaction, cycle), so the drift report marks it as booked.
func (s *Session) bookPrefixChange(reason string) { s.booked = reason }

// checkDrift compares the prefix about to be sent with the last one sent.
// A change is published as an EventDrift saying which section or tool
// drifted, where, and whether it was booked, and returned for the ledger.
func (s *Session) checkDrift() *prompt.Drift {
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
