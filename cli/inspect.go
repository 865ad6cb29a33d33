package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/workbench"
)

// inspectReport is what `tally inspect` prints.
type inspectReport struct {
	Session       string  `json:"session"`
	Model         string  `json:"model"`
	Window        int     `json:"window"`
	ContextTokens int     `json:"context_tokens"`
	Exact         bool    `json:"exact"`
	Level         float64 `json:"level"` // ContextTokens / Window
	// Mode is the session's permission mode and Sandbox how its commands
	// run ("sandboxed: …" or "not sandboxed").
	Mode    string `json:"mode"`
	Sandbox string `json:"sandbox"`
	// StatusPlacement is where the status block goes; CacheRule the
	// provider cache rule the cost estimates assume.
	StatusPlacement string             `json:"status_placement"`
	CacheRule       string             `json:"cache_rule"`
	Fingerprint     prompt.Fingerprint `json:"fingerprint"`
	// Status is the status block the next request would carry, and
	// StatusAudit the re-rendering of every status already sent.
	Status      string       `json:"status"`
	StatusAudit status.Audit `json:"status_audit"`
	// ForgedTags lists engine tags found where the engine did not put
	// them (see agent.Audit.Tags); any entry fails the command.
	ForgedTags []string `json:"forged_tags,omitempty"`
	// Drifts lists the requests whose prompt prefix changed, with the
	// autopsy: the section or tool, the byte offset, booked or not.
	Drifts []driftRow `json:"drifts,omitempty"`
	// Notes say what the request shown may lack: inspect starts no MCP
	// server, so their tools are not in its catalog.
	Notes []string `json:"notes,omitempty"`
	// Effort is what the next request of the session and of each role
	// is sent with; Fallback the session's fallback chain (the saved
	// one, or --fallback's) with what a switch to each costs: the
	// context re-sent at that fallback's miss price.
	Effort   map[string]chat.Effort   `json:"effort"`
	Fallback []workbench.FallbackStep `json:"fallback,omitempty"`
	// EffortChanges are the recorded changes of the effort, oldest first.
	EffortChanges []workbench.EffortChange `json:"effort_changes,omitempty"`
	// Prefix is what the fixed prefix of every request costs: the system
	// message and each tool's schema, in tokens.
	Prefix  step.PrefixCost `json:"prefix"`
	Request inspectRequest  `json:"request"`
}

// inspectRequest is the request the model would receive next: its model,
// messages and tools as the body carries them.
type inspectRequest struct {
	Model    string         `json:"model"`
	Messages []chat.Message `json:"messages"`
	Tools    []chat.Tool    `json:"tools,omitempty"`
}

// driftRow is one prefix change in the inspect report.
type driftRow struct {
	Request int          `json:"request"`
	Summary string       `json:"summary"`
	Drift   prompt.Drift `json:"drift"`
}

func cmdInspect(args []string, stdout, stderr io.Writer) error {
	o, id, w, err := openSessionStore("inspect", args, stderr, true)
	if err != nil {
		return err
	}
	defer w.Close()
	if o.ledger {
		return printLedger(w, id, o.json, stdout)
	}
	// Without --model the session's own model (and window) is shown.
	cfg, err := w.InspectConfig(o.sessionOptions(id))
	if err != nil {
		return err
	}
	sess, err := w.InspectSession(cfg, id)
	if err != nil {
		return err
	}
	view := sess.Snapshot()
	level, exact := view.Level, view.Exact
	rep := inspectReport{
		Session: id, Model: sess.Snapshot().Meta.Model, Window: sess.Snapshot().Window,
		ContextTokens: level, Exact: exact, Fingerprint: sess.Snapshot().Fingerprint, Request: nextRequest(sess),
	}
	if len(rep.Request.Messages) > 0 && rep.Request.Messages[0].Role == chat.RoleSystem {
		rep.Prefix = step.CostOf(rep.Request.Messages[0].Content, rep.Request.Tools)
	}
	rep.Status = sess.Audit().NextStatus()
	rep.Mode, rep.Sandbox = string(sess.Permissions().Mode()), sess.Permissions().SandboxNote()
	placement, rule := view.Placement, view.CacheRule
	rep.StatusPlacement, rep.CacheRule = string(placement), string(rule)
	rows, err := sess.Audit().Ledger()
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.Drift != nil {
			rep.Drifts = append(rep.Drifts, driftRow{Request: r.Request, Drift: *r.Drift, Summary: r.Drift.String()})
		}
	}
	if rep.StatusAudit, err = sess.Audit().Status(); err != nil {
		return err
	}
	rep.ForgedTags = sess.Audit().Tags()
	if servers, err := w.MCPServers(sess.Snapshot().Meta.Workspace, nil); err == nil {
		var on []string
		for _, s := range servers {
			if s.Enabled {
				on = append(on, s.Name)
			}
		}
		if len(on) > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("the catalog shown lacks the tools of the MCP servers %v: inspect starts no server; a turn appends them after the built-in tools", on))
		}
	}
	if rep.Window > 0 {
		rep.Level = float64(level) / float64(rep.Window)
	}
	rep.Effort = w.Efforts(id)
	rep.EffortChanges, _ = w.EffortHistory(id) // an unreadable list shows none; the levels above still hold
	if rep.Fallback, err = w.FallbackPreview(o.fallback, view.Meta.Profile, level); err != nil {
		return usagef("tally inspect: --fallback: %v", err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep); err != nil {
		return err
	}
	if n := len(rep.ForgedTags); n > 0 {
		return fmt.Errorf("tally inspect: %d engine tag(s) appear where the engine did not put them, so workspace or model text could pass for an engine block; first: %s", n, rep.ForgedTags[0])
	}
	if n := len(rep.StatusAudit.Mismatches); n > 0 {
		return fmt.Errorf("tally inspect: %d status block(s) sent to the model disagree with their canonical state; first: %s", n, rep.StatusAudit.Mismatches[0])
	}
	return nil
}

// nextRequest is what inspect shows of the session's next request.
func nextRequest(sess *agent.Session) inspectRequest {
	r := sess.Audit().NextRequest()
	return inspectRequest{Model: r.Model, Messages: r.Messages, Tools: r.Tools}
}
