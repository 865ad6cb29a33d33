package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// SearchPathVars are the environment variables holding lists of folders
// a program searches for code.
var SearchPathVars = []string{
	"PATH", "PYTHONPATH", "NODE_PATH", "LD_LIBRARY_PATH", "GEM_PATH", "PERL5LIB", "RUBYLIB", "CLASSPATH",
	"PYTHONHOME", "VIRTUAL_ENV", "CONDA_PREFIX", "GEM_HOME", "GOPATH", "GOBIN",
}

// ConfineSearchPaths returns env with the entries of the variables names
// (some of [SearchPathVars]) that are empty, relative or inside one of
// roots removed, so that a program of the repository never runs in place
// of one the user installed (a workspace script named git under an allow
// rule for `git status`). Paths compare as written and with links
// resolved; a variable left with no entry is dropped.
func ConfineSearchPaths(env, names []string, roots ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(names, func(v string) bool { return sameVar(v, name) }) {
			out = append(out, kv)
			continue
		}
		var keep []string
		for _, e := range filepath.SplitList(value) {
			if e == "" || !filepath.IsAbs(e) || slices.ContainsFunc(roots, func(r string) bool { return r != "" && Within(e, r) }) {
				continue
			}
			keep = append(keep, e)
		}
		if len(keep) > 0 {
			out = append(out, name+"="+strings.Join(keep, string(os.PathListSeparator)))
		}
	}
	return out
}

// sameVar compares variable names as the system does: without case on
// Windows.
func sameVar(a, b string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// Within reports whether path is root or inside it, comparing both as
// written and with their links resolved.
func Within(path, root string) bool {
	inside := func(p, r string) bool {
		rel, err := filepath.Rel(r, p)
		return err == nil && filepath.IsLocal(rel) || p == r
	}
	p, r := filepath.Clean(path), filepath.Clean(root)
	if inside(p, r) {
		return true
	}
	rp, err1 := filepath.EvalSymlinks(p)
	rr, err2 := filepath.EvalSymlinks(r)
	if err2 != nil {
		rr = r
	}
	if err1 != nil {
		rp = p
	}
	return inside(rp, rr) || inside(p, rr) || inside(rp, r)
}
