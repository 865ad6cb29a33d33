package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// PrivatePaths returns the credential stores under home that no sandboxed
// command may read (see Policy.Hidden for how they are hidden).
func PrivatePaths(home string) []string {
	if home == "" {
		return nil
	}
	out := make([]string, len(privateInHome))
	for i, p := range privateInHome {
		out[i] = filepath.Join(home, p)
	}
	return out
}

// carve turns readable directories into the rules that grant them minus
// hidden: a readable directory with a hidden path below it is replaced by
// its entries, one level at a time along the way to the hidden path, so
// everything else stays readable and the hidden path gets no rule. It
// returns the directories and the files to grant. Landlock only grants, so
// this is the only way to take a path out of a granted tree.
//
// Landlock grants what a path reaches, so carve compares what paths
// reach too: every hidden path is hidden by its real location as well
// (~/.ssh linked into ~/dotfiles hides the dotfiles' folder), and a link
// into a hidden path (~/aws-backup -> .aws) is no way around it. Each
// real folder is walked once, so links in a loop end.
func carve(readable, hidden []string) (dirs, files []string) {
	hidden = realPaths(hidden)
	seen := map[string]bool{}
	var walk func(dir string)
	walk = func(dir string) {
		if seen[dir] || slices.Contains(hidden, dir) {
			return
		}
		seen[dir] = true
		if !containsHidden(dir, hidden) {
			dirs = append(dirs, dir)
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p, err := filepath.EvalSymlinks(filepath.Join(dir, e.Name())) // the rule is on what links reach
			if err != nil {
				continue
			}
			fi, err := os.Stat(p)
			switch {
			case err != nil:
			case fi.IsDir():
				walk(p)
			case !slices.Contains(hidden, p):
				files = append(files, p)
			}
		}
	}
	for _, d := range readable {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			walk(r)
		}
	}
	return dirs, files
}

// realPaths returns paths and, for each that exists, its location with
// every link resolved.
func realPaths(paths []string) []string {
	out := slices.Clone(paths)
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// containsHidden reports whether a hidden path lies strictly below dir.
func containsHidden(dir string, hidden []string) bool {
	for _, h := range hidden {
		if strings.HasPrefix(h, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
