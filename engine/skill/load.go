package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tally-dev/tally/internal/frontmatter"
	"github.com/tally-dev/tally/internal/safefile"
	"github.com/tally-dev/tally/internal/text"
)

// MaxBody bounds the body Load returns, in bytes.
const MaxBody = 64 << 10

// MaxReadFile bounds a file ReadFile returns, in bytes.
const MaxReadFile = 256 << 10

// Loaded is a skill as the model reads it.
type Loaded struct {
	Skill
	// Body is SKILL.md without its header, cut at MaxBody.
	Body string
	// Cut is set when the body was cut.
	Cut bool
	// Files are the other files of the skill's folder, slash-separated
	// and relative to it, sorted, at most MaxFiles.
	Files []string
}

// Load reads skill s: its body and the names of its files.
func Load(s Skill) (Loaded, error) {
	data, cut, err := safefile.ReadWithin(s.Within, s.Path, MaxSkillFile)
	if err != nil {
		return Loaded{}, fmt.Errorf("the skill %q cannot be read (%w); it may have been removed", s.Name, err)
	}
	var h header
	body, err := frontmatter.Parse(data, &h)
	if err != nil {
		return Loaded{}, fmt.Errorf("the skill %q cannot be used: %w", s.Name, err)
	}
	l := Loaded{Skill: s, Body: strings.TrimSpace(body), Cut: cut}
	if len(l.Body) > MaxBody {
		l.Body, l.Cut = text.ClipBytes(l.Body, MaxBody), true
	}
	l.Files = files(s.Dir)
	return l, nil
}

// files lists the regular files under dir but SKILL.md, without following
// links.
func files(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(out) >= MaxFiles {
			return filepath.SkipDir
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err == nil && rel != FileName {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// ReadFile reads the file rel (slash-separated, relative to the skill's
// folder) of skill s. It refuses a path that leaves the folder, a link, a
// FIFO or a device, and cuts the file at MaxReadFile.
func ReadFile(s Skill, rel string) (data []byte, cut bool, err error) {
	clean := path.Clean("/" + strings.ReplaceAll(rel, `\`, "/"))[1:]
	if clean == "" || clean == "." || strings.HasPrefix(rel, "/") || strings.Contains(rel, "..") {
		return nil, false, fmt.Errorf("%q is not a file of the skill %q; give a path relative to the skill's folder, as Load lists them", rel, s.Name)
	}
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		return nil, false, fmt.Errorf("the skill %q cannot be read (%w); it may have been removed", s.Name, err)
	}
	defer root.Close()
	data, cut, err = safefile.ReadIn(root, filepath.FromSlash(clean), MaxReadFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("the skill %q has no file %q; call skill without file to see its files", s.Name, clean)
	}
	if err != nil {
		return nil, false, fmt.Errorf("the file %q of the skill %q cannot be read (%w)", clean, s.Name, err)
	}
	return data, cut, nil
}
