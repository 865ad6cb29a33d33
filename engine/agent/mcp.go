package agent

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/trust"
)

// This file runs a session's MCP servers (package mcp): started in the
// background when the session is created or opened, their tools added to
// the catalog before a request, each addition a booked prefix change, and
// stopped when the session is closed.

// EventMCP reports a change of an MCP server's state (connected, failed,
// crashed, stopped) or a problem with the MCP configuration. Reason says
// what happened in one sentence; Err is set when a server failed or
// crashed, or a configuration file could not be used: the app shows it as
// a banner. Session.MCP().Status has the whole picture. Unlike other events,
// it may arrive from a background goroutine, outside a turn.
const EventMCP EventKind = "mcp"

// MCPOptions tune a session's MCP servers. The zero value runs the user's
// servers (when Config.UserConfigDir is set, from the file at
// mcp.UserPath) and the servers of the workspace's .tally/mcp.json when the
// user trusted its exact content (see trust.Put).
type MCPOptions struct {
	// Off runs no MCP server.
	Off bool
	// User, when set, replaces the user's MCP file.
	User *mcp.Config
	// Budget is the catalog budget in tokens: 0 means mcp.DefaultBudget,
	// a negative value no budget.
	Budget int
	// Wait bounds how long the first request waits for servers still
	// starting; 0 means mcp.DefaultWait.
	Wait time.Duration
	// LogDir holds the servers' stderr logs, <LogDir>/<server>.log; ""
	// means the "mcp" folder next to the store file.
	LogDir string
}

// mcpHost is where a session meets its MCP servers (package mcp): it
// starts them, hands their tools to the catalog before a request and
// their forms to the host, and reports their state as events.
type mcpHost struct{ s *Session }

// start starts the session's MCP servers connecting in the
// background.
func (h mcpHost) start() {
	s := h.s
	o := s.cfg.MCP
	if o.Off {
		return
	}
	ws, id := s.meta.Workspace, s.meta.ID
	logDir := o.LogDir
	if logDir == "" && s.cfg.Store != nil && s.cfg.Store.Path() != "" {
		logDir = filepath.Join(filepath.Dir(s.cfg.Store.Path()), "mcp")
	}
	s.forms.Show = func(req mcp.FormRequest) { h.emit(id, Event{Kind: EventForm, Form: &req}) }
	s.forms.Done = func(req mcp.FormRequest, reason string) {
		h.emit(id, Event{Kind: EventFormDone, Form: &req, Reason: reason})
	}
	// Workspace servers run in the sandbox of the session's commands, as
	// its settings stand now (a network switch turned later applies from
	// the next start of the session).
	confineEnv := s.env
	s.mcpRun = mcp.StartSession(mcp.SessionOptions{
		Workspace: ws, Trusted: trust.Check(s.cfg.Store, trust.MCP, ws),
		User: o.User, ReadUser: s.cfg.UserConfigDir != "",
		Budget: o.Budget, Wait: o.Wait, LogDir: logDir,
		Confine: func(c *exec.Cmd) (*exec.Cmd, error) { return tool.ConfineProgram(&confineEnv, c) },
		Count:   tokens.Count,
		OnStatus: func(st mcp.ServerStatus) {
			reason, problem := mcp.DescribeStatus(st)
			h.emit(id, Event{Kind: EventMCP, Reason: reason, Err: problem})
		},
		Elicit: h.formAsker(id),
	})
	for _, n := range s.mcpRun.Notes() {
		h.emit(id, Event{Kind: EventMCP, Reason: n, Err: n})
	}
}

// emitMCP is emit for events that may come from any goroutine: it reads
// nothing of the session but its ID, given.
func (h mcpHost) emit(id string, e Event) {
	s := h.s
	if s.cfg.OnEvent == nil {
		return
	}
	e.Session, e.Time = id, s.cfg.now()
	s.deliver(e)
}

// syncMCP adds the MCP tools not in the catalog yet, before a request: the
// first batch after the built-ins (when nothing was sent since the session
// was opened), later ones and mcp_search's finds at the very end. A change
// of a prefix already sent is booked; a session that never sent a request
// has no prefix to drift from. It runs with the session lock held; the
// first call waits, up to MCPOptions.Wait, for the servers to start.
func (h mcpHost) sync() {
	s := h.s
	r := s.mcpRun
	if r == nil {
		return
	}
	r.AwaitStart()
	batch, found, first := r.Take()
	if len(batch)+len(found) == 0 {
		return
	}
	extra := first && !s.sentSinceOpen
	var names []string
	for _, t := range batch {
		if extra {
			s.tools.AddExtra(t)
		} else {
			s.tools.Activate(t)
		}
		names = append(names, t.Spec().Name)
	}
	for _, t := range found {
		s.tools.Activate(t)
		names = append(names, t.Spec().Name)
	}
	s.resetPrefix()
	if s.st.Requests == 0 {
		s.sentFP, s.sentSystem = s.fp, s.st.System
		return
	}
	reason := "mcp tools added: " + summarizeNames(names, 3)
	if s.booked != "" {
		reason = s.booked + "; " + reason
	}
	s.booked = reason // an intended change: the drift report marks it as booked
}

// summarizeNames lists up to n names and counts the rest.
func summarizeNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// Status returns the state of the session's MCP servers and what their
// tools take in the catalog. It never waits for a running turn; a session
// without MCP servers (or opened with Inspect) gives the zero value.
func (h MCP) Status() mcp.SessionStatus { return h.s.mcpRun.Status() }

// Connect connects the named server again (the banner's or the
// settings' retry) and returns why it failed, if it did. Its tools reach
// the catalog at the end, at the next request, as a booked change. It
// never waits for a running turn.
func (h MCP) Connect(ctx context.Context, name string) error { return h.s.mcpRun.Connect(ctx, name) }
