package agent

import (
	"context"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/diag"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// checklistKey is the per-session state key of the checklist.
const checklistKey = "checklist"

// loadChecklist restores the session's checklist from the store; a damaged
// record gives an empty list rather than a failed session.
func loadChecklist(st *storage.Store, id string) *todo.List {
	data, err := st.State(id, checklistKey)
	if err != nil || data == nil {
		return todo.New()
	}
	l, err := todo.Decode(data)
	if err != nil {
		return todo.New()
	}
	return l
}

// saveChecklist returns a commit step that persists the checklist when it
// changed since it was last saved, and publishes the change.
func (s *Session) saveChecklist() func(tx *storage.Tx) error {
	v := s.checklist.Version()
	if v == s.savedList {
		return nil
	}
	return func(tx *storage.Tx) error {
		data, err := s.checklist.MarshalJSON()
		if err != nil {
			return err
		}
		if err := tx.PutState(s.meta.ID, checklistKey, data); err != nil {
			return err
		}
		s.pendingList = v // saved only if the whole commit succeeds (see commit)
		return nil
	}
}

// goalsOf returns the open checklist items and the number done.
func goalsOf(items []todo.Item) ([]status.Goal, int) {
	var open []status.Goal
	done := 0
	for _, it := range items {
		switch it.Status {
		case todo.Completed:
			done++
		default:
			open = append(open, status.Goal{ID: it.ID, Content: it.Content, InProgress: it.Status == todo.InProgress})
		}
	}
	return open, done
}

// alerts collects the active alert lines for the status bar.
func (s *Session) alerts() []string {
	a := append(s.guard.Alerts(), s.st.Breakers.Alerts()...)
	if !s.env.RequireSandbox {
		a = append(a, NotSandboxedAlert)
	}
	return append(a, s.skills.Alerts()...)
}

// NotSandboxedAlert is the alert the status block and the footer carry
// where commands cannot run inside the sandbox, so the downgrade is never
// silent.
const NotSandboxedAlert = "not sandboxed: commands run with your account's full access and each one asks first"

// DiagnosticsTimeout bounds each checker run after a file write.
const DiagnosticsTimeout = 20 * time.Second

// diagnose checks the files written in this round — through the language
// servers where one covers the file, the file-type checks elsewhere — and
// appends what it found as one <diagnostics> message. A missing or
// failing checker never blocks the turn.
func (t *turnLoop) diagnose(ctx context.Context, paths []string) error {
	s := t.s
	if len(paths) == 0 || s.cfg.NoDiagnostics {
		return nil
	}
	// The language servers check what they cover; the file-type checks
	// (gofmt, go vet) the rest.
	text, rest := s.lsp.Diagnose(ctx, paths)
	if len(rest) > 0 {
		if rep := diag.Run(ctx, s.meta.Workspace, rest, s.cfg.DiagRules, DiagnosticsTimeout); rep.Text != "" {
			text = strings.TrimSpace(text + "\n" + rep.Text)
		}
	}
	if text == "" {
		return nil
	}
	return s.commit([]transcript.Message{transcript.Injected(transcript.KindDiagnostics, text, s.cfg.now())}, nil)
}
