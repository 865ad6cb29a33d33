package agent

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

	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/internal/trust"
)

// Agent Skills in a session (package skill): the names and descriptions
// of the skills found when the session was created are a section of its
// system prompt, stored with it, so reopening the session or adding a
// skill later never moves the prefix. The skill tool, offered when that
// section is not empty, loads a skill's body and files on demand. A skill
// added while the session lives is named in the status block's alerts
// (an append at the tail) and loads the same way.

// SkillToolName is the name of the tool that loads a skill.
const SkillToolName = "skill"

// skillRefresh is how long a discovery of the skills is reused.
const skillRefresh = 2 * time.Second

//go:embed load_skill.md
var skillDoc string

var skillSpec = tool.Spec{
	Name:        SkillToolName,
	Description: strings.TrimSpace(skillDoc),
	Parameters: json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string","description":"The skill's name."},` +
		`"file":{"type":"string","description":"Optional: a file of the skill, as listed, to read instead of its instructions."}},` +
		`"required":["name"],"additionalProperties":false}`),
}

// skills is a session's view of the skills: the catalog it started with
// and a live one, found again when a turn starts and, for the skill
// tool, when the last look is older than skillRefresh. The status block
// reads the live one as it is: it never touches the disk.
type skills struct {
	s        *Session
	initial  []string // the names in the system prompt, sorted
	mu       sync.Mutex
	live     skill.Catalog
	liveTime time.Time
}

// discoverSkills finds the skills a session in workspace abs sees now.
func discoverSkills(cfg Config, abs string) skill.Catalog {
	trustedHash, _ := trust.Get(cfg.Store, trust.Skills, abs) // unreadable trust: the workspace's skills stay out
	return skill.Discover(cfg.UserConfigDir, abs, trustedHash)
}

// refresh looks for the skills again; a nil k has none.
func (k *skills) refresh() {
	if k == nil {
		return
	}
	cat := discoverSkills(k.s.cfg, k.s.meta.Workspace)
	k.mu.Lock()
	k.live, k.liveTime = cat, time.Now()
	k.mu.Unlock()
}

// catalog returns the live catalog, looked for again when the last look
// is older than skillRefresh.
func (k *skills) catalog() skill.Catalog {
	k.mu.Lock()
	stale := k.liveTime.IsZero() || time.Since(k.liveTime) > skillRefresh
	k.mu.Unlock()
	if stale {
		k.refresh()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.live
}

// alerts name the skills added since the session began, as the last look
// found them, for the status block.
func (k *skills) alerts() []string {
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

// skillTool is the skill tool of a session.
type skillTool struct{ k *skills }

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
		data, cut, err := skill.ReadFile(sk, p.File)
		if err != nil {
			return tool.Result{IsError: true, Content: err.Error()}
		}
		out := string(data)
		if cut {
			out += fmt.Sprintf("\n[cut at %d KB]", skill.MaxReadFile>>10)
		}
		return tool.Result{Content: out}
	}
	l, err := skill.Load(sk)
	if err != nil {
		return tool.Result{IsError: true, Content: err.Error()}
	}
	return tool.Result{Content: renderSkill(l, env)}
}

// renderSkill is what the model reads of a loaded skill.
func renderSkill(l skill.Loaded, env *tool.Env) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %s (%s)\n\n%s\n", l.Name, l.Source, l.Body)
	if l.Cut {
		fmt.Fprintf(&b, "[the instructions were cut at %d KB]\n", skill.MaxBody>>10)
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
