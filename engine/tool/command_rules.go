package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tally-dev/tally/engine/cmdrule"
	"github.com/tally-dev/tally/internal/text"
)

// CommandRules supplies the command rules in force (see package cmdrule)
// each time a run_shell call is decided; an error means they could not be
// read, and the call is then treated as unchecked.
type CommandRules func() (cmdrule.Set, error)

// SetCommandRules makes the gate check every run_shell call against the
// rules f returns: a call a deny rule meets is refused in every mode, and
// one the allow rules cover runs without asking where the mode would ask.
// A nil f checks no rules.
func (g *Gate) SetCommandRules(f CommandRules) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.commands = f
}

// commandCheck is what the command rules say about one call.
type commandCheck struct {
	match cmdrule.Match
	// unchecked says why the deny rules could not be checked ("" when
	// they were, or there are none): such a call never runs without a
	// person's yes.
	unchecked string
}

// checkCommand checks a run_shell call of t with args against the rules;
// other tools, and arguments run_shell itself would refuse, check nothing.
// It decodes args with the tool's own decoder, so the command checked is
// the command run.
func (g *Gate) checkCommand(t Tool, args string) commandCheck {
	g.mu.Lock()
	rules := g.commands
	g.mu.Unlock()
	if rules == nil || t.Spec().Name != runShellSpec.Name {
		return commandCheck{}
	}
	var p RunShellParams
	if err := decodeParams(runShellSpec.Name, json.RawMessage(args), &p); err != nil {
		return commandCheck{}
	}
	set, err := rules()
	if err != nil {
		return commandCheck{unchecked: fmt.Sprintf("the command rules could not be read (%v)", err)}
	}
	c := commandCheck{match: set.Check(p.Command)}
	if c.match.Err != nil && len(set.Deny) > 0 {
		c.unchecked = fmt.Sprintf("the command could not be parsed to check it against the deny rules (%v)", c.match.Err)
	}
	return c
}

type ruleAllowedKey struct{}

// allowedByRule reports whether the call of ctx runs because an allow
// rule covered it, without a person's yes.
func allowedByRule(ctx context.Context) bool {
	ok, _ := ctx.Value(ruleAllowedKey{}).(bool)
	return ok
}

// deniedByRule is the result for the model when a deny rule refuses a
// command.
func deniedByRule(m cmdrule.Match) Result {
	return Result{IsError: true, Content: fmt.Sprintf(
		"run_shell: refused without asking, because %q matches the user's deny rule %q; do not run it another way, and tell the user if it is really needed",
		text.Clip(m.Command, 120), m.Rule)}
}

// uncheckedRefusal is the result for the model when a call would run
// without asking but could not be checked against the deny rules.
func uncheckedRefusal(why string) Result {
	return Result{IsError: true, Content: "run_shell: refused without asking, because " + why + "; write the command in plain shell syntax"}
}

// joinNote adds note to the request's note.
func joinNote(req *ApprovalRequest, note string) {
	if req.Note != "" {
		note = req.Note + "; " + note
	}
	req.Note = note
}
