package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// privateInHome are the paths under the home directory that hold
// credentials: they stay unreadable inside the sandbox even though the
// rest of the home directory is readable.
var privateInHome = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
	".password-store", ".local/share/keyrings", ".netrc", ".git-credentials",
	".pgpass", ".npmrc", ".pypirc", ".vault-token", ".config/gh",
	// The X server's and the session manager's cookies: with one, a
	// process can type into every window of the desktop.
	".Xauthority", ".ICEauthority",
}

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
func carve(readable, hidden []string) (dirs, files []string) {
	var walk func(dir string)
	walk = func(dir string) {
		for _, h := range hidden {
			if h == dir {
				return
			}
		}
		if !containsHidden(dir, hidden) {
			dirs = append(dirs, dir)
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			fi, err := os.Stat(p) // follow links: the rule is on what they reach
			switch {
			case err != nil:
			case fi.IsDir():
				walk(p)
			case !isHidden(p, hidden):
				files = append(files, p)
			}
		}
	}
	for _, d := range readable {
		walk(d)
	}
	return dirs, files
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

func isHidden(p string, hidden []string) bool {
	for _, h := range hidden {
		if p == h {
			return true
		}
	}
	return false
}
