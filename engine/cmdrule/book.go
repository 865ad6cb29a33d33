package cmdrule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tally-dev/tally/internal/workspace"
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

// InForce is one command rule in force in a session.
type InForce struct {
	// Pattern is the rule's canonical pattern, such as `npm run lint *`.
	Pattern string
	// Deny says matching commands are refused without asking; otherwise
	// they run without asking where the mode would ask.
	Deny bool
	// ThisRun says the rule was given for this session only
	// (`tally run --allow-command`) and is not
	// stored; the others belong to the workspace, for all its sessions.
	ThisRun bool
}

// Book is a session's command rules: the workspace's, kept in the store
// and read again at every check so that a rule added in one session
// applies in every session of the workspace from its next call, and the
// session's own. Its methods are safe for concurrent use.
type Book struct {
	store     *storage.Store // nil: no workspace rules
	workspace string         // the workspace's key in the store

	mu  sync.Mutex
	own Set
	// raw is the stored setting last parsed, and parsed its rules for
	// this workspace.
	raw    []byte
	parsed Set
}

// Open returns the rules of a session of workspace ws kept in st (nil:
// the session's own alone), with the session's own allow and deny
// patterns, or the first invalid one's error.
func Open(st *storage.Store, ws string, allow, deny []string) (*Book, error) {
	key, err := workspace.Resolve(ws)
	if err != nil {
		key = filepath.Clean(ws)
	}
	c := &Book{store: st, workspace: key}
	for _, p := range allow {
		r, err := Parse(Allow, p)
		if err != nil {
			return nil, err
		}
		c.own.Allow = append(c.own.Allow, r)
	}
	for _, p := range deny {
		r, err := Parse(Deny, p)
		if err != nil {
			return nil, err
		}
		c.own.Deny = append(c.own.Deny, r)
	}
	return c, nil
}

// Set returns every rule in force: the workspace's and the session's.
func (c *Book) Set() (Set, error) {
	ws, err := c.workspaceSet()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Set{
		Allow: slices.Concat(ws.Allow, c.own.Allow),
		Deny:  slices.Concat(ws.Deny, c.own.Deny),
	}
	return out, err
}

func (c *Book) workspaceSet() (Set, error) {
	if c.store == nil {
		return Set{}, nil
	}
	raw, err := c.store.Setting(commandRulesKey)
	if err != nil {
		return Set{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw != nil && bytes.Equal(raw, c.raw) {
		return c.parsed, nil
	}
	stored, err := decodeCommandRules(raw)
	if err != nil {
		return Set{}, err
	}
	var set Set
	w := stored.Workspaces[c.workspace]
	for _, p := range w.Allow {
		if r, err := Parse(Allow, p); err == nil {
			set.Allow = append(set.Allow, r)
		}
	}
	for _, p := range w.Deny {
		if r, err := Parse(Deny, p); err == nil {
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
func (c *Book) update(fn func(w *workspaceCommands) error) error {
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
func (c *Book) add(r Rule) error {
	p := r.Pattern()
	err := c.update(func(w *workspaceCommands) error {
		same, other := &w.Allow, &w.Deny
		if r.Kind() == Deny {
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
	if r.Kind() == Allow {
		other = &c.own.Deny
	}
	*other = slices.DeleteFunc(*other, func(o Rule) bool { return o.Pattern() == p })
	return nil
}

// canonical is the stored form of a pattern the user names, or the
// pattern as typed when it does not parse (so that any stored entry can
// be revoked).
func canonical(pattern string) string {
	if r, err := Parse(Deny, pattern); err == nil {
		return r.Pattern()
	}
	if r, err := Parse(Allow, pattern); err == nil {
		return r.Pattern()
	}
	return strings.TrimSpace(pattern)
}

// List lists the command rules in force for the session: the workspace's, then the session's own, deny rules first
// within each, in the order they were added. An error says the stored
// rules could not be read; the session's own are still listed.
func (c *Book) List() ([]InForce, error) {
	ws, err := c.workspaceSet()
	c.mu.Lock()
	own := Set{Allow: slices.Clone(c.own.Allow), Deny: slices.Clone(c.own.Deny)}
	c.mu.Unlock()
	var out []InForce
	for i, set := range []Set{ws, own} {
		for _, r := range set.Deny {
			out = append(out, InForce{Pattern: r.Pattern(), Deny: true, ThisRun: i == 1})
		}
		for _, r := range set.Allow {
			out = append(out, InForce{Pattern: r.Pattern(), ThisRun: i == 1})
		}
	}
	return out, err
}

// Allow stores an allow rule for the session's workspace: from
// their next call, every session of the workspace runs the run_shell
// commands it matches without asking, where the mode would ask (deny
// rules and read-only mode still refuse). The same pattern as a deny
// rule is withdrawn. An invalid pattern (see Parse) is refused
// with one sentence. It writes the store; call it off the UI goroutine.
func (c *Book) Allow(pattern string) error {
	r, err := Parse(Allow, pattern)
	if err != nil {
		return err
	}
	return c.add(r)
}

// Deny stores a deny rule for the session's workspace: from their
// next call, every session of the workspace refuses, without asking and
// in every mode, a run_shell command any simple command of which it
// matches. The same pattern as an allow rule is withdrawn. An invalid
// pattern is refused with one sentence. It writes the store; call it off
// the UI goroutine.
func (c *Book) Deny(pattern string) error {
	r, err := Parse(Deny, pattern)
	if err != nil {
		return err
	}
	return c.add(r)
}

// Revoke withdraws the command rule with pattern, allow or deny,
// of the workspace or of this session alone; it is an error when there
// is none. It writes the store; call it off the UI goroutine.
func (c *Book) Revoke(pattern string) error {
	p := canonical(pattern)
	found := false
	c.mu.Lock()
	drop := func(r Rule) bool {
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
