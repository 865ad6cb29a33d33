package workbench

import (
	"errors"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/llm"
)

// OpenSession opens stored session id with cfg (made by Config and
// completed by the caller's approver and event sink), ready to run turns.
// It fails with ErrLocked while another Tally runs the session.
func (w *Workbench) OpenSession(cfg agent.Config, id string) (*agent.Session, error) {
	return agent.Open(cfg, id)
}

// CreateSession stores a new session over workspace and opens it; an empty
// title names it after the workspace until its first prompt does.
func (w *Workbench) CreateSession(cfg agent.Config, workspace, title string) (*agent.Session, error) {
	return agent.Create(cfg, "", workspace, title)
}

// OpenOrCreateSession opens session id, creating it over workspace when no
// session has that ID yet (the command line's --session).
func (w *Workbench) OpenOrCreateSession(cfg agent.Config, id, workspace string) (*agent.Session, error) {
	return agent.OpenOrCreate(cfg, id, workspace)
}

// InspectSession opens session id read-only: its messages, ledger, next
// request and plans can be read while another Tally runs it, and nothing
// it offers writes.
func (w *Workbench) InspectSession(cfg agent.Config, id string) (*agent.Session, error) {
	return agent.Inspect(cfg, id)
}

// Problem is what a failed model request or connection test means for
// the person at the keyboard.
type Problem int

// The kinds of Problem.
const (
	ProblemOther        Problem = iota // anything else; show the error itself
	ProblemUnreachable                 // the host did not answer
	ProblemUnauthorized                // the server refused the API key (401/403)
	ProblemUnknownModel                // the server does not serve the model
)

// Classify says which Problem err is.
func Classify(err error) Problem {
	switch {
	case err == nil:
		return ProblemOther
	case errors.Is(err, llm.ErrUnreachable):
		return ProblemUnreachable
	case llm.IsUnauthorized(err):
		return ProblemUnauthorized
	case llm.IsModelNotFound(err):
		return ProblemUnknownModel
	}
	return ProblemOther
}

// The request timeouts a session uses when Settings leaves them at 0.
const (
	DefaultConnectTimeout   = llm.DefaultConnectTimeout
	DefaultFirstByteTimeout = llm.DefaultFirstByteTimeout
	DefaultIdleTimeout      = llm.DefaultStreamIdleTimeout
)
