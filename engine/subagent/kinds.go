package subagent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/frontmatter"
	"github.com/tally-dev/tally/internal/text"
)

// Custom sub-agents: a Markdown file in the user's agents folder
// (<config>/agents/NAME.md) or the workspace's (.tally/agents, and
// .claude/agents as other agents keep them) whose header says what the
// agent is for and may narrow its tools, pick its model and set its step
// budget, and whose body is its system prompt. The task tool offers them
// beside explore and general; each keeps its own fixed prompt and tool
// catalog, so its children share a cached prefix as the built-in kinds'
// do. The ones found when the session was created are listed in its
// system prompt.

// AgentDirs are the workspace's folders of custom sub-agents, in the
// order a name is looked up (the user's own agents come first).
var AgentDirs = []string{".tally/agents", ".claude/agents"}

// Limits of custom sub-agents.
const (
	maxAgentFile  = 64 << 10
	maxAgents     = 50
	maxAgentSteps = 200
)

// Kind is one custom sub-agent.
type Kind struct {
	Name, Description string
	Tools             []string // Tally's tool names; nil is general's tools
	Model             string   // "" is the session's model
	MaxSteps          int      // 0 is the session's default
	Prompt            string
	Path              string
}

type header struct {
	Name        string           `yaml:"name"`
	Description string           `yaml:"description"`
	Tools       frontmatter.List `yaml:"tools"`
	Model       string           `yaml:"model"`
	MaxSteps    int              `yaml:"max-steps"`
	Steps       int              `yaml:"steps"`
}

// agentTools maps the tool names an agent file may give, Tally's and the
// ones other agents use, to Tally's tools.
var agentTools = map[string]string{
	"read_file": "read_file", "list_dir": "list_dir", "grep": "grep",
	"write_file": "write_file", "edit_file": "edit_file", "run_shell": "run_shell",
	"Read": "read_file", "LS": "list_dir", "Glob": "list_dir", "Grep": "grep",
	"Write": "write_file", "Edit": "edit_file", "MultiEdit": "edit_file", "Bash": "run_shell",
}

// writes tells whether the kind may change files or run commands.
func (k Kind) writes() bool {
	if k.Tools == nil {
		return true
	}
	for _, t := range k.Tools {
		if t == "write_file" || t == "edit_file" || t == "run_shell" {
			return true
		}
	}
	return false
}

// Discover finds the custom sub-agents of the user (in userDir) and
// of workspace, sorted by name; notes say what was skipped and why.
func Discover(userDir, workspace string) (kinds []Kind, notes []string) {
	// Each folder with the folder its files must stay inside: a
	// workspace's definition linked to a file elsewhere is not read.
	type folder struct{ dir, within string }
	var dirs []folder
	if userDir != "" {
		dirs = append(dirs, folder{filepath.Join(userDir, "agents"), ""})
	}
	if workspace != "" {
		for _, d := range AgentDirs {
			dirs = append(dirs, folder{filepath.Join(workspace, filepath.FromSlash(d)), workspace})
		}
	}
	seen := map[string]bool{Explore: true, General: true}
	for _, f := range dirs {
		dir := f.dir
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || len(kinds) >= maxAgents {
				continue
			}
			k, err := readAgent(filepath.Join(dir, e.Name()), f.within)
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					notes = append(notes, err.Error())
				}
				continue
			}
			if seen[k.Name] {
				notes = append(notes, fmt.Sprintf("the sub-agent %s is skipped: the name %q is taken by a built-in kind or an earlier file", k.Path, k.Name))
				continue
			}
			seen[k.Name] = true
			kinds = append(kinds, k)
		}
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Name < kinds[j].Name })
	return kinds, notes
}

// readAgent parses one agent file, kept inside the folder within unless
// that is "".
func readAgent(path, within string) (Kind, error) {
	var h header
	body, err := frontmatter.ReadFile(path, within, maxAgentFile, "the sub-agent", &h)
	if err != nil {
		return Kind{}, err
	}
	k := Kind{Name: strings.TrimSpace(h.Name), Description: strings.Join(strings.Fields(h.Description), " "), Prompt: strings.TrimSpace(body), Path: path}
	if k.Name == "" {
		k.Name = strings.TrimSuffix(filepath.Base(path), ".md")
	}
	switch {
	case !frontmatter.IsName(k.Name):
		return Kind{}, fmt.Errorf("the sub-agent %s is skipped: its name %q is not lowercase letters, digits and hyphens; rename it", path, text.Clip(k.Name, 80))
	case k.Description == "":
		return Kind{}, fmt.Errorf("the sub-agent %s is skipped: it has no description, which says when to use it; add one to its header", path)
	case k.Prompt == "":
		return Kind{}, fmt.Errorf("the sub-agent %s is skipped: its body, the agent's instructions, is empty", path)
	}
	if len(h.Tools) > 0 {
		k.Tools = []string{}
		for _, t := range h.Tools {
			name, ok := agentTools[t]
			if !ok {
				if strings.HasPrefix(t, "mcp__") {
					continue // MCP tools are the parent's alone
				}
				return Kind{}, fmt.Errorf("the sub-agent %s is skipped: it names the tool %q, which sub-agents do not have; use read_file, list_dir, grep, write_file, edit_file or run_shell", path, text.Clip(t, 60))
			}
			if !slices.Contains(k.Tools, name) {
				k.Tools = append(k.Tools, name)
			}
		}
		sort.Strings(k.Tools)
	}
	switch m := strings.TrimSpace(h.Model); m {
	case "", "inherit", "sonnet", "opus", "haiku":
		// the session's model: other agents' aliases name no model here
	default:
		k.Model = m
	}
	k.MaxSteps = h.MaxSteps
	if k.MaxSteps == 0 {
		k.MaxSteps = h.Steps
	}
	if k.MaxSteps < 0 || k.MaxSteps > maxAgentSteps {
		return Kind{}, fmt.Errorf("the sub-agent %s is skipped: max-steps %d is not between 1 and %d", path, k.MaxSteps, maxAgentSteps)
	}
	return k, nil
}

// Section is the system prompt's list of custom sub-agents; "" for
// none.
func Section(kinds []Kind) string {
	if len(kinds) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Custom sub-agents\nBesides explore and general, the task tool's kind may name one of these:\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "- %s: %s\n", k.Name, text.Clip(k.Description, 400))
	}
	return strings.TrimRight(b.String(), "\n")
}

// findAgent returns the custom sub-agent name as the session sees it now.
func (h *Hub) findAgent(name string) (Kind, bool) {
	kinds, _ := Discover(h.userDir, h.p.Workspace())
	for _, k := range kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// customPrompt is the system prompt of a custom kind: its body and the
// environment section, the same bytes for every child of that kind.
func customPrompt(k Kind, workspace string) string {
	return k.Prompt + "\n\n" + childEnvironment(workspace)
}

// customTools is the registry of a custom kind: the read tools and the
// checklist, and of the others those its file allows.
func (h *Hub) customTools(k Kind, list *todo.List) *tool.Registry {
	if k.Tools == nil {
		return h.subagentTools(General, list)
	}
	reg := h.subagentTools(Explore, list)
	for _, name := range k.Tools {
		switch name {
		case "write_file":
			reg.AddBuiltin(tool.WriteFile())
		case "edit_file":
			reg.AddBuiltin(tool.EditFile())
		case "run_shell":
			reg.AddBuiltin(tool.RunShell())
		}
	}
	return reg
}
