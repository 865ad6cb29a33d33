package agent

import (
	"context"
	"fmt"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/internal/text"
)

// This file routes the forms a session's MCP servers ask for during a tool
// call (MCP elicitation) to the user: each becomes an EventForm, and the
// host answers it through the front door, MCP.AnswerForm. A host that
// answers no forms (Config.Forms false) has every form declined at once.

// Form events. Like EventMCP they may arrive from a background goroutine
// (the server's connection), during a turn.
const (
	// EventForm says an MCP server asks the user to fill in a form; Form
	// holds it. The call waits until the host answers with
	// MCP.AnswerForm(Form.ID, …) or the call ends.
	EventForm EventKind = "form"
	// EventFormDone says the form Form.ID no longer waits: it was
	// answered, or withdrawn because its call ended; Reason says which
	// ("accepted", "declined", "cancelled" or "withdrawn"). A host
	// closes the form's dialog.
	EventFormDone EventKind = "form_done"
)

// formAsker is the session's mcp.Options.Elicit; id is the session's ID
// (the events it sends read nothing else of the session).
func (h mcpHost) formAsker(id string) func(context.Context, mcp.Form) (mcp.Reply, error) {
	return func(ctx context.Context, f mcp.Form) (mcp.Reply, error) { return h.askForm(ctx, id, f) }
}

// askForm shows f to the host and waits for its answer, or declines it at
// once when the host answers no forms. When ctx ends first (the call was
// stopped or ended) the form is withdrawn.
func (h mcpHost) askForm(ctx context.Context, id string, f mcp.Form) (mcp.Reply, error) {
	s := h.s
	if !s.cfg.Forms {
		h.emit(id, Event{Kind: EventMCP, Reason: fmt.Sprintf("the MCP server %q asked for a form (%q), but no one is there to fill it in, so it was declined",
			f.Server, text.OneLine(f.Message, 80))})
		return mcp.Declined, nil
	}
	return s.forms.Ask(ctx, f)
}

// AnswerForm answers the waiting form id (see mcp.Forms.Answer). It never
// waits for a running turn and may be called from any goroutine.
func (h MCP) AnswerForm(id string, r mcp.Reply) error { return h.s.forms.Answer(id, r) }
