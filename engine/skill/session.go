package skill

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// ToolName is the name of the tool that loads (activates) a skill.
const ToolName = "skill"

// skillRefresh is how long a discovery of the skills is reused.
const skillRefresh = 2 * time.Second

//go:embed load_skill.md
var skillDoc string

// skillSpec is the skill tool's spec for a session whose system prompt
// names names (sorted): the names are the enum of its name parameter, so
// the spec, like the prompt, is fixed when the session starts and its
// bytes never change while it lives.
func skillSpec(names []string) tool.Spec {
	enum, _ := json.Marshal(names) // a slice of strings always encodes
	return tool.Spec{
		Name:        ToolName,
		Description: strings.TrimSpace(skillDoc),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","enum":` + string(enum) + `,"description":"The skill's name."},` +
			`"file":{"type":"string","description":"Optional: a file of the skill, as listed, to read instead of its instructions."}},` +
			`"required":["name"],"additionalProperties":false}`),
	}
}

// Activation returns the skill a call of the skill tool activates, from
// the call's JSON arguments: its name, and false for a call that reads
// one of a skill's files or cannot be read.
func Activation(arguments string) (string, bool) {
	var p struct{ Name, File string }
	if err := json.Unmarshal([]byte(arguments), &p); err != nil || p.File != "" || strings.TrimSpace(p.Name) == "" {
		return "", false
	}
	return strings.TrimSpace(p.Name), true
}

// Activations returns the indexes of the tool results in msgs that hold
// an activated skill's instructions: the results of skill tool calls
// without a file that did not fail. Compaction keeps them verbatim.
func Activations(msgs []transcript.Message) map[int]bool {
	calls := map[string]bool{}
	out := map[int]bool{}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case transcript.Assistant:
			for _, c := range m.ToolCalls {
				if c.Name != ToolName {
					continue
				}
				if _, ok := Activation(c.Arguments); ok {
					calls[c.ID] = true
				}
			}
		case transcript.Tool:
			if calls[m.ToolCallID] && m.ToolName == ToolName && !m.IsError {
				out[i] = true
			}
		}
	}
	return out
}

// activeCall returns the ID of the call whose result in msgs holds the
// instructions of skill name, when there is one.
func activeCall(msgs []transcript.Message, name string) (string, bool) {
	byID := map[string]string{} // call ID → the skill it activates
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.Name != ToolName {
				continue
			}
			if n, ok := Activation(c.Arguments); ok {
				byID[c.ID] = n
			}
		}
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Role == transcript.Tool && !m.IsError && byID[m.ToolCallID] == name &&
			strings.HasPrefix(m.Text(), "Skill "+name+" (") { // the instructions themselves, not a note
			return m.ToolCallID, true
		}
	}
	return "", false
}

// Session is a session's view of the skills: the catalog it started with
// and a live one, found again when a turn starts and, for the skill tool,
// when the last look is older than two seconds; a look reads no file
// when no skills folder or SKILL.md changed (see [Discover]). The status
// block reads the live one as it is: it never touches the disk. Its methods are safe for
// concurrent use, and on a nil *Session, which has no skills.
type Session struct {
	discover func() Catalog
	initial  []string // the names in the system prompt, sorted
	mu       sync.Mutex
	live     Catalog
	liveTime time.Time
}

// NewSession returns the skills of a session whose system prompt names
// initial; discover finds the skills the session sees now.
func NewSession(initial []string, discover func() Catalog) *Session {
	return &Session{discover: discover, initial: initial}
}

// Refresh looks for the skills again.
func (k *Session) Refresh() {
	if k == nil {
		return
	}
	cat := k.discover()
	k.mu.Lock()
	k.live, k.liveTime = cat, time.Now()
	k.mu.Unlock()
}

// catalog returns the live catalog, looked for again when the last look
// is older than skillRefresh.
func (k *Session) catalog() Catalog {
	k.mu.Lock()
	stale := k.liveTime.IsZero() || time.Since(k.liveTime) > skillRefresh
	k.mu.Unlock()
	if stale {
		k.Refresh()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.live
}

// Alerts name the skills added since the session began, as the last look
// found them, for the status block.
func (k *Session) Alerts() []string {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	live := k.live
	k.mu.Unlock()
	var out []string
	for _, sk := range live.Skills {
		if !slices.Contains(k.initial, sk.Name) {
			out = append(out, fmt.Sprintf("new skill %s: %s (load it with the skill tool)", sk.Name, text.Clip(sk.Description, 200)))
		}
	}
	return out
}

// Tool is the session's skill tool, which loads a skill's body and files
// on demand. history returns the session's conversation as committed
// (nil: no history): a skill whose instructions are already in it is not
// loaded again.
func (k *Session) Tool(history func() []transcript.Message) tool.Tool {
	return skillTool{k: k, history: history, spec: skillSpec(k.initial)}
}

// skillTool is the skill tool of a session.
type skillTool struct {
	k       *Session
	history func() []transcript.Message
	spec    tool.Spec // made once: its bytes are part of the session's prefix
}

func (t skillTool) Spec() tool.Spec   { return t.spec }
func (skillTool) NeedsApproval() bool { return false }

func (t skillTool) Run(_ context.Context, env *tool.Env, args json.RawMessage) tool.Result {
	var p struct{ Name, File string }
	if err := json.Unmarshal(args, &p); err != nil || strings.TrimSpace(p.Name) == "" {
		return tool.Result{IsError: true, Content: `skill needs {"name": "<a skill's name>"}; the names are in the system prompt's Skills section`}
	}
	cat := t.k.catalog()
	sk, ok := cat.Find(strings.TrimSpace(p.Name))
	if !ok {
		return tool.Result{IsError: true, Content: fmt.Sprintf("there is no skill %q; the skills are %s", text.Clip(p.Name, 80), strings.Join(cat.Names(), ", "))}
	}
	if p.File != "" {
		data, cut, err := ReadFile(sk, p.File)
		if err != nil {
			return tool.Result{IsError: true, Content: err.Error()}
		}
		out := string(data)
		if cut {
			out += fmt.Sprintf("\n[cut at %d KB]", MaxReadFile>>10)
		}
		return tool.Result{Content: out}
	}
	if t.history != nil {
		if id, ok := activeCall(t.history(), sk.Name); ok {
			return tool.Result{Content: fmt.Sprintf("The skill %s is already active: its instructions are in the result of your earlier skill call %s above, and they stay in the conversation. Follow them; read one of its files with skill {\"name\": %q, \"file\": PATH}.", sk.Name, id, sk.Name)}
		}
	}
	l, err := Load(sk)
	if err != nil {
		return tool.Result{IsError: true, Content: err.Error()}
	}
	return tool.Result{Content: renderSkill(l, env)}
}

// renderSkill is what the model reads of a loaded skill.
func renderSkill(l Loaded, env *tool.Env) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %s (%s)\n\n%s\n", l.Name, l.Source, l.Body)
	if l.Cut {
		fmt.Fprintf(&b, "[the instructions were cut at %d KB]\n", MaxBody>>10)
	}
	if len(l.AllowedTools) > 0 {
		fmt.Fprintf(&b, "\nThis skill expects to use: %s. Tally's permission rules still apply to each call.\n", strings.Join(l.AllowedTools, ", "))
	}
	if len(l.Files) > 0 {
		where := ""
		if env != nil && env.Workspace != "" {
			if rel, err := filepath.Rel(env.Workspace, l.Dir); err == nil && !strings.HasPrefix(rel, "..") {
				where = fmt.Sprintf(" (or with read_file under %s)", filepath.ToSlash(rel))
			}
		}
		fmt.Fprintf(&b, "\nFiles of this skill; read one with skill {\"name\": %q, \"file\": PATH}%s:\n", l.Name, where)
		for _, f := range l.Files {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
