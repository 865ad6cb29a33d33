package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tally-dev/tally/internal/safefile"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/internal/trust"
	"github.com/tally-dev/tally/internal/userconfig"
)

// FileName is the name of a hooks file, both in the user's config folder
// (under "tally") and in a workspace's ".tally" folder.
const FileName = "hooks.json"

// Event names a point of a session where hooks run, spelled as in Claude
// Code's settings.
type Event string

// The events hooks run on.
const (
	// SessionStart runs when a session is created ("startup"), opened
	// again ("resume") or compacted ("compact"); its matcher is matched
	// against that source. What it prints is added to the next message.
	SessionStart Event = "SessionStart"
	// UserPromptSubmit runs before the user's message enters the
	// conversation: it may refuse it or add context to it.
	UserPromptSubmit Event = "UserPromptSubmit"
	// PreToolUse runs before a tool call, matched by tool name: it may
	// allow, deny or ask, and change the arguments.
	PreToolUse Event = "PreToolUse"
	// PostToolUse runs after a tool call, matched by tool name: it may
	// tell the model something about the result.
	PostToolUse Event = "PostToolUse"
	// PreCompact runs before a compaction, matched against its trigger
	// ("manual" or "auto"); it blocks nothing.
	PreCompact Event = "PreCompact"
	// Stop runs when the model answered without calling a tool: it may
	// make the agent go on with a new instruction.
	Stop Event = "Stop"
)

// Events lists every event, in the order a session meets them.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact, Stop}

// known reports whether e is one of Events.
func known(e Event) bool { return slices.Contains(Events, e) }

// Source says which file a hook came from.
type Source string

// The sources of hooks.
const (
	SourceUser      Source = "user"      // the user's own file
	SourceWorkspace Source = "workspace" // the workspace's .tally/hooks.json
)

// DefaultTimeout bounds a hook that names no timeout; MaxTimeout bounds
// every hook.
const (
	DefaultTimeout = 60 * time.Second
	MaxTimeout     = 10 * time.Minute
)

// Limits of what a hooks file may hold; more is reported and ignored.
const (
	maxConfigSize = 1 << 20
	maxHooks      = 256
	maxMatcher    = 1000
	maxCommand    = 16 << 10
)

// Hook is one command hook of a file, with the event and matcher of its
// group. The zero Timeout means DefaultTimeout.
type Hook struct {
	// ID names the hook uniquely among a session's hooks:
	// "<source>/<event>/<group>/<index>".
	ID string `json:"id"`
	// Source and Path are the file the hook came from.
	Source Source `json:"source"`
	Path   string `json:"path"`
	// Event and Matcher are its group's; see [Hook.Matches].
	Event   Event  `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	// Command is the shell command line, run with bash -c.
	Command string `json:"command"`
	// Timeout is the file's "timeout"; see [Hook.Limit].
	Timeout time.Duration `json:"timeout,omitempty"`

	re *regexp.Regexp // the compiled matcher; nil matches everything or compares literally
}

// Limit is the time the hook may run: its Timeout, or DefaultTimeout,
// never more than MaxTimeout.
func (h Hook) Limit() time.Duration {
	if h.Timeout <= 0 {
		return DefaultTimeout
	}
	return min(h.Timeout, MaxTimeout)
}

// fileJSON is a hooks file; keys other than "hooks" (a whole Claude Code
// settings file, say) are ignored.
type fileJSON struct {
	Hooks map[string]json.RawMessage `json:"hooks"`
}

type groupJSON struct {
	Matcher string        `json:"matcher"`
	Hooks   []commandJSON `json:"hooks"`
}

type commandJSON struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout"`
}

// Parse reads the hooks of a file at path from its content data. An empty
// file has none. What cannot be used — an event Tally does not run, a
// hook that is not a command, an unusable timeout or matcher — is left out
// or replaced by the default and described in notes, one sentence each;
// only a file that is not JSON in the expected shape is an error.
func Parse(data []byte, source Source, path string) (hooks []Hook, notes []string, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, nil
	}
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, fmt.Errorf("%s is not a valid hooks file (%w); fix its JSON, shaped {\"hooks\": {\"PreToolUse\": [{\"matcher\": \"run_shell\", \"hooks\": [{\"type\": \"command\", \"command\": \"...\"}]}]}}", path, err)
	}
	names := make([]string, 0, len(f.Hooks))
	for name := range f.Hooks {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return order(a) - order(b) })
	for _, name := range names {
		ev := Event(name)
		if !known(ev) {
			notes = append(notes, fmt.Sprintf("%s: the %q hooks are ignored because Tally runs hooks only on %s", path, text.Clip(name, 40), eventList()))
			continue
		}
		var groups []groupJSON
		if err := json.Unmarshal(f.Hooks[name], &groups); err != nil {
			return nil, nil, fmt.Errorf("%s: the %s hooks are not a list of {\"matcher\", \"hooks\"} groups (%w); fix the file", path, name, err)
		}
		for g, grp := range groups {
			re, note := compileMatcher(grp.Matcher)
			if note != "" {
				notes = append(notes, fmt.Sprintf("%s: %s matcher %q %s", path, name, text.Clip(grp.Matcher, 60), note))
			}
			for i, c := range grp.Hooks {
				h, note := makeHook(c, source, path, ev, grp.Matcher, re)
				if note != "" {
					notes = append(notes, fmt.Sprintf("%s: %s hook %d of group %d %s", path, name, i+1, g+1, note))
				}
				if h.Command == "" {
					continue
				}
				if len(hooks) >= maxHooks {
					notes = append(notes, fmt.Sprintf("%s holds more than %d hooks; the rest are ignored", path, maxHooks))
					return hooks, notes, nil
				}
				h.ID = fmt.Sprintf("%s/%s/%d/%d", source, ev, g, i)
				hooks = append(hooks, h)
			}
		}
	}
	return hooks, notes, nil
}

// makeHook checks one command of a group; a hook it cannot use comes back
// with no Command and a note saying why.
func makeHook(c commandJSON, source Source, path string, ev Event, matcher string, re *regexp.Regexp) (Hook, string) {
	h := Hook{Source: source, Path: path, Event: ev, Matcher: matcher, re: re}
	switch {
	case c.Type != "command":
		return Hook{}, fmt.Sprintf("is ignored because its type is %q; Tally runs only \"command\" hooks", text.Clip(c.Type, 30))
	case strings.TrimSpace(c.Command) == "":
		return Hook{}, "is ignored because its command is empty"
	case strings.ContainsRune(c.Command, 0):
		return Hook{}, "is ignored because its command holds a NUL byte"
	case len(c.Command) > maxCommand:
		return Hook{}, fmt.Sprintf("is ignored because its command is longer than %d bytes; put it in a script", maxCommand)
	}
	h.Command = c.Command
	if c.Timeout == nil {
		return h, ""
	}
	t := *c.Timeout
	if math.IsNaN(t) || t <= 0 || math.IsInf(t, 0) {
		return h, fmt.Sprintf("has the timeout %v, which is not a positive number of seconds; %s is used", t, DefaultTimeout)
	}
	if t > MaxTimeout.Seconds() {
		h.Timeout = MaxTimeout
		return h, fmt.Sprintf("has a timeout over %s; %s is used", MaxTimeout, MaxTimeout)
	}
	h.Timeout = time.Duration(t * float64(time.Second))
	return h, ""
}

// order sorts event names: Tally's events in their order, then the others
// by name.
func order(name string) int {
	if i := slices.Index(Events, Event(name)); i >= 0 {
		return i - len(Events)
	}
	return 0
}

func eventList() string {
	s := make([]string, len(Events))
	for i, e := range Events {
		s[i] = string(e)
	}
	return strings.Join(s, ", ")
}

// UserPath returns the user's hooks file: hooks.json in Tally's config
// folder (see package userconfig).
func UserPath() (string, error) { return userconfig.File(FileName) }

// WorkspacePath returns the hooks file of workspace ws: .tally/hooks.json.
func WorkspacePath(ws string) string { return filepath.Join(ws, ".tally", FileName) }

// LoadFile reads and parses the hooks file at path as source; a missing
// file has no hooks.
func LoadFile(path string, source Source) ([]Hook, []string, error) {
	data, cut, err := safefile.Read(path, maxConfigSize)
	data, err = configData(path, data, cut, err)
	if err != nil || data == nil {
		return nil, nil, err
	}
	return Parse(data, source, path)
}

// LoadUser reads the user's hooks file (see [UserPath]).
func LoadUser() ([]Hook, []string, error) {
	path, err := UserPath()
	if err != nil {
		return nil, nil, err
	}
	return LoadFile(path, SourceUser)
}

// WorkspaceFile describes a workspace's hooks file for the trust prompt.
type WorkspaceFile struct {
	// Path is the file, "" when the workspace has none; Hash its
	// [TrustHash], "" when the scripts it names cannot be covered.
	Path string `json:"path,omitempty"`
	Hash string `json:"hash,omitempty"`
	// NeedsTrust is set when the file has hooks but its hash is not
	// trusted: none of them runs until the user trusts this content.
	NeedsTrust bool `json:"needs_trust,omitempty"`
	// Preview is the file's hooks, to show what trusting it would run;
	// they are never run without trust.
	Preview []Hook `json:"preview,omitempty"`
}

// LoadWorkspace reads the hooks file of workspace ws, confined to it (never
// a symlink, a FIFO or a file outside it), and returns its hooks when
// trusted(hash) holds for its [TrustHash]; otherwise none, with
// WorkspaceFile.NeedsTrust set. A missing file is no hooks and no error.
func LoadWorkspace(ws string, trusted func(hash string) bool) ([]Hook, WorkspaceFile, []string, error) {
	return loadWorkspace(ws, trusted, nil)
}

// loadWorkspace is LoadWorkspace with every path it looks at recorded in
// w (nil: none), each before it is read.
func loadWorkspace(ws string, trusted func(hash string) bool, w *trust.Watch) ([]Hook, WorkspaceFile, []string, error) {
	path := WorkspacePath(ws)
	_, _ = w.Lstat(path) // recorded before the read, which reports any error
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil, WorkspaceFile{}, nil, fmt.Errorf("the workspace %s cannot be opened (%w); check that it exists and is readable", ws, err)
	}
	data, cut, err := safefile.ReadIn(root, filepath.Join(".tally", FileName), maxConfigSize)
	root.Close()
	data, err = configData(path, data, cut, err)
	if err != nil || data == nil {
		return nil, WorkspaceFile{}, nil, err
	}
	wf := WorkspaceFile{Path: path}
	hooks, notes, err := Parse(data, SourceWorkspace, path)
	if err != nil {
		return nil, wf, nil, err
	}
	wf.Preview = hooks
	if wf.Hash, err = trustHash(ws, data, hooks, w); err != nil {
		return nil, wf, notes, err
	}
	if trusted == nil || !trusted(wf.Hash) {
		wf.NeedsTrust = len(hooks) > 0
		return nil, wf, notes, nil
	}
	return hooks, wf, notes, nil
}

// configData is safefile.Config with the file's size limit.
func configData(path string, data []byte, cut bool, err error) ([]byte, error) {
	return safefile.Config(path, data, cut, err, maxConfigSize)
}

// UntrustedNote is the one-line note for a workspace hooks file that is
// not trusted: what was skipped and how to trust it.
func UntrustedNote(workspace string) string {
	return fmt.Sprintf("the hooks of %s do not run because the file is not trusted yet; review it, then trust it in Settings or with `tally hooks trust --workspace %s`",
		WorkspacePath(workspace), workspace)
}
