// Package skill finds Agent Skills — folders holding a SKILL.md, in the
// open format other agents read — and loads them on demand.
//
// Skills are looked up in the user's config folder (skills/ under it) and
// in the workspace's .tally/skills, .agents/skills and .claude/skills; on a
// name found twice the user's skill wins, then the workspace folders in
// that order. Only a skill's name and description enter the system prompt
// (see [Catalog.Section], sorted by name so the bytes do not depend on
// the order folders are read in); its body and files are read when the
// model asks for them, through [Load] and [ReadFile].
//
// A repository is untrusted: the workspace's skills are offered only once
// the user trusted their exact content ([Catalog.WorkspaceHash]), and
// every read stays inside the skill's own folder, refuses links, FIFOs
// and devices, and is bounded.
package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tally-dev/tally/internal/frontmatter"
	"github.com/tally-dev/tally/internal/safefile"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/internal/trust"
)

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// Limits of discovery and loading.
const (
	MaxSkills      = 200       // skills taken from all folders together
	MaxDescription = 1024      // bytes of a description kept in the catalog
	MaxSkillFile   = 256 << 10 // bytes of a SKILL.md read
	MaxFiles       = 100       // files of a skill listed by Load
)

// WorkspaceDirs are the workspace's skill folders, in the order a name is
// looked up.
var WorkspaceDirs = []string{".tally/skills", ".agents/skills", ".claude/skills"}

// Sources of a skill.
const (
	SourceUser      = "user"
	SourceWorkspace = "workspace"
)

// Skill is one skill found.
type Skill struct {
	// Name is the skill's name: its header's name, or its folder's.
	Name string
	// Description says when to use it, one paragraph.
	Description string
	// AllowedTools are the tools its header says it uses; they are shown
	// to the model, never granted.
	AllowedTools []string
	// Source is SourceUser or SourceWorkspace; Dir is the skill's folder
	// (absolute) and Path its SKILL.md.
	Source, Dir, Path string
	// Within is the folder a workspace skill's files must stay inside
	// (the workspace; "" for the user's): a link out of it is not read.
	Within string `json:"-"`
}

// Catalog is the skills of a workspace, as a session sees them.
type Catalog struct {
	// Skills are the skills offered, sorted by name.
	Skills []Skill
	// Notes are the problems found, one sentence each: a SKILL.md whose
	// header cannot be read, a name taken twice.
	Notes []string
	// WorkspaceHash fingerprints the workspace's skills ("" when it has
	// none); they are offered when the trusted hash given to Discover is
	// this one.
	WorkspaceHash string
	// Withheld counts the workspace skills not offered for want of trust.
	Withheld int
	// WorkspaceSkills are the workspace's skills whether trusted or not,
	// for the trust prompt.
	WorkspaceSkills []Skill
}

type header struct {
	Name         string           `yaml:"name"`
	Description  string           `yaml:"description"`
	AllowedTools frontmatter.List `yaml:"allowed-tools"`
}

// Discover finds the skills of the user (in userDir, "" for none) and of
// workspace ("" for none). The workspace's are offered only when trusted
// is its WorkspaceHash. What it read is remembered with the stamp of
// every folder listed and SKILL.md read (see trust.Watch): while none of
// them changed, a call reads no file, and a skill added, removed or
// edited is seen by the next call as before.
func Discover(userDir, workspace, trusted string) Catalog {
	return found(userDir, workspace).catalog(trusted)
}

// scanned is what Discover reads from disk, before the trust decides
// which workspace skills are offered.
type scanned struct {
	user, ws []Skill  // the user's, then the workspace's (each name once)
	notes    []string // the problems found reading them
	hash     string   // the workspace's skills' fingerprint
}

// scanAll reads the skills of userDir and workspace, recording in w each
// folder and SKILL.md it looks at before reading it.
func scanAll(userDir, workspace string, w *trust.Watch) scanned {
	var f scanned
	if userDir != "" {
		f.user = scan(filepath.Join(userDir, "skills"), SourceUser, "", &f.notes, w)
	}
	if workspace == "" {
		return f
	}
	for _, d := range WorkspaceDirs {
		for _, s := range scan(filepath.Join(workspace, filepath.FromSlash(d)), SourceWorkspace, workspace, &f.notes, w) {
			if slices.ContainsFunc(f.ws, func(o Skill) bool { return o.Name == s.Name }) {
				f.notes = append(f.notes, fmt.Sprintf("the skill %q of %s is also in an earlier skills folder, so it is not used", s.Name, d))
				continue
			}
			f.ws = append(f.ws, s)
		}
	}
	h := sha256.New()
	for _, s := range f.ws {
		data, _, err := safefile.ReadWithin(s.Within, s.Path, MaxSkillFile)
		if err != nil {
			continue
		}
		rel, _ := filepath.Rel(workspace, s.Path)
		fmt.Fprintf(h, "%d:%s%d:", len(rel), filepath.ToSlash(rel), len(data))
		h.Write(data)
	}
	if len(f.ws) > 0 {
		f.hash = hex.EncodeToString(h.Sum(nil))
	}
	return f
}

// catalog is the catalog of f when trusted is the workspace skills'
// trusted hash; it shares no slice with f.
func (f scanned) catalog(trusted string) Catalog {
	c := Catalog{Notes: slices.Clone(f.notes), WorkspaceHash: f.hash, WorkspaceSkills: cloneSkills(f.ws)}
	seen := map[string]bool{}
	for _, s := range f.user {
		seen[s.Name] = true
		c.Skills = append(c.Skills, s)
	}
	for _, s := range f.ws {
		switch {
		case f.hash != trusted:
			c.Withheld++
		case seen[s.Name]:
			c.Notes = append(c.Notes, fmt.Sprintf("the workspace's skill %q has the name of one of yours, so yours is used", s.Name))
		default:
			seen[s.Name] = true
			c.Skills = append(c.Skills, s)
		}
	}
	c.Skills = cloneSkills(c.Skills)
	sort.Slice(c.Skills, func(i, j int) bool { return c.Skills[i].Name < c.Skills[j].Name })
	if len(c.Skills) > MaxSkills {
		c.Notes = append(c.Notes, fmt.Sprintf("only the first %d skills by name are offered", MaxSkills))
		c.Skills = c.Skills[:MaxSkills]
	}
	return c
}

func cloneSkills(list []Skill) []Skill {
	out := slices.Clone(list)
	for i := range out {
		out[i].AllowedTools = slices.Clone(out[i].AllowedTools)
	}
	return out
}

// scan reads the skills directly under dir, adding their problems to
// notes; w records dir and each SKILL.md before it is read.
func scan(dir, source, within string, notes *[]string, w *trust.Watch) []Skill {
	if _, err := w.Stat(dir); err != nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		w.Spoil()
		return nil
	}
	var out []Skill
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue // a link to a folder elsewhere is not followed
		}
		_, _ = w.Stat(filepath.Join(dir, e.Name(), FileName)) // recorded before read reads it
		s, err := read(filepath.Join(dir, e.Name()), source, within)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			*notes = append(*notes, err.Error())
			continue
		}
		out = append(out, s)
	}
	return out
}

// read parses the header of the skill in folder dir.
func read(dir, source, within string) (Skill, error) {
	path := filepath.Join(dir, FileName)
	var h header
	if _, err := frontmatter.ReadFile(path, within, MaxSkillFile, "the skill", &h); err != nil {
		return Skill{}, err
	}
	name := strings.TrimSpace(h.Name)
	if name == "" {
		name = filepath.Base(dir)
	}
	if !frontmatter.IsName(name) {
		return Skill{}, fmt.Errorf("the skill %s is skipped: its name %q is not lowercase letters, digits and hyphens (at most 64); rename it", path, text.ClipBytes(name, 80))
	}
	desc := strings.Join(strings.Fields(h.Description), " ")
	if desc == "" {
		return Skill{}, fmt.Errorf("the skill %s is skipped: it has no description, which says when to use it; add one to its header", path)
	}
	return Skill{Name: name, Description: text.ClipBytes(desc, MaxDescription), AllowedTools: h.AllowedTools, Source: source, Dir: dir, Path: path, Within: within}, nil
}

// Find returns the skill called name.
func (c Catalog) Find(name string) (Skill, bool) {
	i := slices.IndexFunc(c.Skills, func(s Skill) bool { return s.Name == name })
	if i < 0 {
		return Skill{}, false
	}
	return c.Skills[i], true
}

// Names returns the names of the skills offered, sorted.
func (c Catalog) Names() []string {
	out := make([]string, len(c.Skills))
	for i, s := range c.Skills {
		out[i] = s.Name
	}
	return out
}

// Section is the catalog's text for the system prompt: one line a skill,
// sorted by name; "" when there is none.
func (c Catalog) Section() string {
	if len(c.Skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Skills\nA skill holds instructions (and sometimes files) for one kind of task. " +
		"When a task matches a skill below, call the skill tool with its name before you start, and follow what it returns.\n")
	for _, s := range c.Skills {
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, text.OneLine(s.Description, 0))
	}
	return strings.TrimRight(b.String(), "\n")
}
