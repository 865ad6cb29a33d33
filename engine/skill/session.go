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
	"github.com/tally-dev/tally/internal/text"
)

// ToolName is the name of the tool that loads a
const ToolName = "skill"

// skillRefresh is how long a discovery of the skills is reused.
const skillRefresh = 2 * time.Second

//go:embed load_skill.md
var skillDoc string

var skillSpec = tool.Spec{
	Name:        ToolName,
	Description: strings.TrimSpace(skillDoc),
	Parameters: json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string","description":"The skill's name."},` +
		`"file":{"type":"string","description":"Optional: a file of the skill, as listed, to read instead of its instructions."}},` +
		`"required":["name"],"additionalProperties":false}`),
}

// Session is a session's view of the skills: the catalog it started with
// and a live one, found again when a turn starts and, for the skill tool,
// when the last look is older than two seconds. The status block reads the
// live one as it is: it never touches the disk. Its methods are safe for
// concurrent use, and on a nil *Session, which has no
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
// on demand.
func (k *Session) Tool() tool.Tool { return skillTool{k} }

// skillTool is the skill tool of a session.
type skillTool struct{ k *Session }

func (skillTool) Spec() tool.Spec     { return skillSpec }
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
	l, err := Load(sk)
	if err != nil {
		return tool.Result{IsError: true, Content: err.Error()}
	}
	return tool.Result{Content: renderSkill(l, env)}
}

// renderSkill is what the model reads of a loaded
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
