package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tally-dev/tally/engine/cmdrule"
	"github.com/tally-dev/tally/storage"
)

// commandRulesKey is the store setting holding the command rules of each
// workspace, by the workspace's resolved absolute path.
const commandRulesKey = "command_rules"

type storedCommandRules struct {
	Workspaces map[string]workspaceCommands `json:"workspaces"`
}

type workspaceCommands struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// CommandRule is one run_shell command rule in force in a session (see
// package cmdrule for what a pattern matches).
type CommandRule struct {
	// Pattern is the rule's canonical pattern, such as `npm run lint *`.
	Pattern string
	// Deny says matching commands are refused without asking; otherwise
	// they run without asking where the mode would ask.
	Deny bool
	// ThisRun says the rule was given for this session only
	// (Config.AllowCommands, `tally run --allow-command`) and is not
	// stored; the others belong to the workspace, for all its sessions.
	ThisRun bool
}

// commandRules are a session's command rules: the workspace's, read from
// the store at every check so that a rule added in one session applies
// in every session of the workspace from its next call, and the
// session's own.
type commandRules struct {
	store     *storage.Store // nil: no workspace rules
	workspace string         // the workspace's key in the store

	mu  sync.Mutex
	own cmdrule.Set
	// raw is the stored setting last parsed, and parsed its rules for
	// this workspace.
	raw    []byte
	parsed cmdrule.Set
}

// newCommandRules returns the rules of a session of workspace, with its
// own allow and deny patterns, or the first invalid one's error.
func newCommandRules(st *storage.Store, workspace string, allow, deny []string) (*commandRules, error) {
	key, err := checkWorkspace(workspace)
	if err != nil {
		key = filepath.Clean(workspace)
	}
	c := &commandRules{store: st, workspace: key}
	for _, p := range allow {
		r, err := cmdrule.Parse(cmdrule.Allow, p)
		if err != nil {
			return nil, err
		}
		c.own.Allow = append(c.own.Allow, r)
	}
	for _, p := range deny {
		r, err := cmdrule.Parse(cmdrule.Deny, p)
		if err != nil {
			return nil, err
		}
		c.own.Deny = append(c.own.Deny, r)
	}
	return c, nil
}

// set returns every rule in force: the workspace's and the session's.
func (c *commandRules) set() (cmdrule.Set, error) {
	ws, err := c.workspaceSet()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := cmdrule.Set{
		Allow: slices.Concat(ws.Allow, c.own.Allow),
		Deny:  slices.Concat(ws.Deny, c.own.Deny),
	}
	return out, err
}

func (c *commandRules) workspaceSet() (cmdrule.Set, error) {
	if c.store == nil {
		return cmdrule.Set{}, nil
	}
	raw, err := c.store.Setting(commandRulesKey)
	if err != nil {
		return cmdrule.Set{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw != nil && bytes.Equal(raw, c.raw) {
		return c.parsed, nil
	}
	stored, err := decodeCommandRules(raw)
	if err != nil {
		return cmdrule.Set{}, err
	}
	var set cmdrule.Set
	w := stored.Workspaces[c.workspace]
	for _, p := range w.Allow {
		if r, err := cmdrule.Parse(cmdrule.Allow, p); err == nil {
			set.Allow = append(set.Allow, r)
		}
	}
	for _, p := range w.Deny {
		if r, err := cmdrule.Parse(cmdrule.Deny, p); err == nil {
			set.Deny = append(set.Deny, r)
		}
	}
	c.raw, c.parsed = append([]byte{}, raw...), set
	return set, nil
}

func decodeCommandRules(raw []byte) (storedCommandRules, error) {
	var s storedCommandRules
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &s); err != nil {
			return s, fmt.Errorf("the command rules in the store are unreadable (%w); add the rules again under Rules", err)
		}
	}
	return s, nil
}

// update changes the workspace's stored rules with fn.
func (c *commandRules) update(fn func(w *workspaceCommands) error) error {
	if c.store == nil {
		return errors.New("this session has no store to keep command rules in; open it from the app or the command line")
	}
	return c.store.Update(func(tx *storage.Tx) error {
		raw, err := tx.Setting(commandRulesKey)
		if err != nil {
			return err
		}
		s, err := decodeCommandRules(raw)
		if err != nil {
			s = storedCommandRules{} // unreadable: start over
		}
		if s.Workspaces == nil {
			s.Workspaces = map[string]workspaceCommands{}
		}
		w := s.Workspaces[c.workspace]
		if err := fn(&w); err != nil {
			return err
		}
		if len(w.Allow) == 0 && len(w.Deny) == 0 {
			delete(s.Workspaces, c.workspace)
		} else {
			s.Workspaces[c.workspace] = w
		}
		data, err := json.Marshal(s)
		if err != nil {
			return err
		}
		return tx.PutSetting(commandRulesKey, data)
	})
}

// add stores the rule r for the workspace, withdrawing the same pattern
// of the other kind.
func (c *commandRules) add(r cmdrule.Rule) error {
	p := r.Pattern()
	err := c.update(func(w *workspaceCommands) error {
		same, other := &w.Allow, &w.Deny
		if r.Kind() == cmdrule.Deny {
			same, other = other, same
		}
		*other = slices.DeleteFunc(*other, func(s string) bool { return s == p })
		if !slices.Contains(*same, p) {
			*same = append(*same, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	other := &c.own.Allow
	if r.Kind() == cmdrule.Allow {
		other = &c.own.Deny
	}
	*other = slices.DeleteFunc(*other, func(o cmdrule.Rule) bool { return o.Pattern() == p })
	return nil
}

// canonical is the stored form of a pattern the user names, or the
// pattern as typed when it does not parse (so that any stored entry can
// be revoked).
func canonical(pattern string) string {
	if r, err := cmdrule.Parse(cmdrule.Deny, pattern); err == nil {
		return r.Pattern()
	}
	if r, err := cmdrule.Parse(cmdrule.Allow, pattern); err == nil {
		return r.Pattern()
	}
	return strings.TrimSpace(pattern)
}

// CommandRules lists the run_shell command rules in force for this
// session: the workspace's, then the session's own, deny rules first
// within each, in the order they were added. An error says the stored
// rules could not be read; the session's own are still listed.
func (h Permissions) CommandRules() ([]CommandRule, error) {
	c := h.s.cmds
	ws, err := c.workspaceSet()
	c.mu.Lock()
	own := cmdrule.Set{Allow: slices.Clone(c.own.Allow), Deny: slices.Clone(c.own.Deny)}
	c.mu.Unlock()
	var out []CommandRule
	for i, set := range []cmdrule.Set{ws, own} {
		for _, r := range set.Deny {
			out = append(out, CommandRule{Pattern: r.Pattern(), Deny: true, ThisRun: i == 1})
		}
		for _, r := range set.Allow {
			out = append(out, CommandRule{Pattern: r.Pattern(), ThisRun: i == 1})
		}
	}
	return out, err
}

// AllowCommand stores an allow rule for the session's workspace: from
// their next call, every session of the workspace runs the run_shell
// commands it matches without asking, where the mode would ask (deny
// rules and read-only mode still refuse). The same pattern as a deny
// rule is withdrawn. An invalid pattern (see cmdrule.Parse) is refused
// with one sentence. It writes the store; call it off the UI goroutine.
func (h Permissions) AllowCommand(pattern string) error {
	r, err := cmdrule.Parse(cmdrule.Allow, pattern)
	if err != nil {
		return err
	}
	return h.s.cmds.add(r)
}

// DenyCommand stores a deny rule for the session's workspace: from their
// next call, every session of the workspace refuses, without asking and
// in every mode, a run_shell command any simple command of which it
// matches. The same pattern as an allow rule is withdrawn. An invalid
// pattern is refused with one sentence. It writes the store; call it off
// the UI goroutine.
func (h Permissions) DenyCommand(pattern string) error {
	r, err := cmdrule.Parse(cmdrule.Deny, pattern)
	if err != nil {
		return err
	}
	return h.s.cmds.add(r)
}

// RevokeCommand withdraws the command rule with pattern, allow or deny,
// of the workspace or of this session alone; it is an error when there
// is none. It writes the store; call it off the UI goroutine.
func (h Permissions) RevokeCommand(pattern string) error {
	c := h.s.cmds
	p := canonical(pattern)
	found := false
	c.mu.Lock()
	drop := func(r cmdrule.Rule) bool {
		if r.Pattern() == p {
			found = true
			return true
		}
		return false
	}
	c.own.Allow = slices.DeleteFunc(c.own.Allow, drop)
	c.own.Deny = slices.DeleteFunc(c.own.Deny, drop)
	c.mu.Unlock()
	if c.store == nil {
		if !found {
			return fmt.Errorf("there is no command rule %q in this session; the rules in force are listed under Rules", p)
		}
		return nil
	}
	err := c.update(func(w *workspaceCommands) error {
		n := len(w.Allow) + len(w.Deny)
		is := func(s string) bool { return s == p || s == strings.TrimSpace(pattern) }
		w.Allow = slices.DeleteFunc(w.Allow, is)
		w.Deny = slices.DeleteFunc(w.Deny, is)
		if len(w.Allow)+len(w.Deny) == n && !found {
			return fmt.Errorf("there is no command rule %q in this workspace; the rules in force are listed under Rules", p)
		}
		return nil
	})
	return err
}
