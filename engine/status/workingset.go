package status

import (
	"regexp"
	"sort"
	"strings"

	"github.com/tally-dev/tally/engine/transcript"
)

// WorkingSetLimit caps the paths shown in <turn_meta>.
const WorkingSetLimit = 24

// WorkingSet is the set of workspace paths the recent turns touched. Its
// rendering is sorted and carries no ages, so it only changes when a new
// path joins or an old one is pushed out.
type WorkingSet struct {
	Paths []string `json:"paths"` // most recent last
}

// Touch records paths as the most recently used. Paths come from file
// names, tool output and the human, so each is neutralised on entry (see
// transcript.NeutralizeLine): a file named like an engine block can never
// open or close one in <turn_meta>.
func (w *WorkingSet) Touch(paths ...string) {
	for _, p := range paths {
		p = transcript.NeutralizeLine(strings.TrimPrefix(strings.TrimSpace(p), "./"))
		if p == "" || p == "." {
			continue
		}
		for i, q := range w.Paths {
			if q == p {
				w.Paths = append(w.Paths[:i], w.Paths[i+1:]...)
				break
			}
		}
		w.Paths = append(w.Paths, p)
	}
	if len(w.Paths) > WorkingSetLimit {
		w.Paths = w.Paths[len(w.Paths)-WorkingSetLimit:]
	}
}

// Sorted returns the paths in byte order.
func (w *WorkingSet) Sorted() []string {
	out := append([]string(nil), w.Paths...)
	sort.Strings(out)
	return out
}

// Summary renders the set on one line, byte-stable for the same set.
func (w *WorkingSet) Summary() string {
	if len(w.Paths) == 0 {
		return "(none yet)"
	}
	sorted := w.Sorted()
	for i, p := range sorted {
		sorted[i] = transcript.NeutralizeLine(p) // sets stored before paths were neutralised on entry
	}
	return strings.Join(sorted, ", ")
}

// pathLike finds workspace-looking paths in human text: a word with a slash
// or a dotted extension, such as calc/calc.go or README.md.
var pathLike = regexp.MustCompile(`(?:^|[\s(\x60'"])((?:[\w.-]+/)*[\w-]+\.[A-Za-z0-9]{1,8}|(?:[\w.-]+/)+[\w.-]+)`)

// PathsIn returns the path-like words of text in order of appearance.
func PathsIn(text string) []string {
	var out []string
	for _, m := range pathLike.FindAllStringSubmatch(text, -1) {
		p := strings.TrimRight(m[1], ".,:;")
		if strings.Contains(p, "://") || strings.HasPrefix(p, "/") || len(p) > 200 {
			continue
		}
		out = append(out, p)
	}
	return out
}
