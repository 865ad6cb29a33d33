package workbench

import (
	"errors"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/llm"
)

// OpenSession opens stored session id with cfg (made by Config and
// completed by the caller's approver and event sink), ready to run turns.
// It fails with an error matching ErrInUse while another holder in this
// process has the session open (see Borrow).
func (w *Workbench) OpenSession(cfg agent.Config, id string) (*agent.Session, error) {
	c, cfg := w.newClaim(cfg)
	if err := c.take(id); err != nil {
		return nil, err
	}
	sess, err := agent.Open(cfg, id)
	if err != nil {
		c.release()
	}
	return sess, err
}

// CreateSession stores a new session over workspace and opens it; an empty
// title names it after the workspace until its first prompt does.
func (w *Workbench) CreateSession(cfg agent.Config, workspace, title string) (*agent.Session, error) {
	c, cfg := w.newClaim(cfg)
	sess, err := agent.Create(cfg, "", workspace, title)
	if err != nil {
		return nil, err
	}
	return w.claimed(c, sess)
}

// claimed takes claim c for sess, a session just created, closing sess
// when another holder has its ID open.
func (w *Workbench) claimed(c *claim, sess *agent.Session) (*agent.Session, error) {
	if err := c.take(sess.Snapshot().Meta.ID); err != nil {
		sess.Close()
		return nil, err
	}
	return sess, nil
}

// OpenOrCreateSession opens session id, creating it over workspace when no
// session has that ID yet (the command line's --session).
func (w *Workbench) OpenOrCreateSession(cfg agent.Config, id, workspace string) (*agent.Session, error) {
	c, cfg := w.newClaim(cfg)
	if err := c.take(id); err != nil {
		return nil, err
	}
	sess, err := agent.OpenOrCreate(cfg, id, workspace)
	if err != nil {
		c.release()
	}
	return sess, err
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
