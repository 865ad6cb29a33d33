// Package workspace is the one rule for the folder a session may work in:
// an existing folder, named by its absolute, symlink-free path, that is
// neither the home folder (or one of its parents) nor Tally's data folder
// (or one of its parents).
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Check resolves dir to the absolute, symlink-free folder a
// session may work in, and refuses a folder no session may have: the home
// directory or one of its parents (such as / or /home), where the agent
// could read the user's keys and change the shell's startup files, and a
// folder that is Tally's data directory dataDir or contains it ("" skips
// that rule), where every session and the API key are kept. It is the one
// rule the command line, the app's New-session dialog and the engine use;
// a stored session whose workspace breaks it runs no turn.
func Check(dir, dataDir string) (string, error) { return check(dir, dataDir, asWorkspace) }

// kind names a folder in the rule's refusals: what it is and what to
// pass instead.
type kind struct{ noun, instead string }

var (
	asWorkspace = kind{"workspace", "pass a project folder instead (e.g. --workspace ~/src/myproject)"}
	asRoot      = kind{"additional folder", "give a project folder instead (e.g. ~/src/shared-lib)"}
)

func check(dir, dataDir string, k kind) (string, error) {
	abs, err := resolve(dir, k)
	if err != nil {
		return "", err
	}
	return abs, protected(abs, dataDir, k)
}

// Protected reports why the resolved workspace abs may not be used, or
// nil: the part of Check that needs no file system but the home folder.
func Protected(abs, dataDir string) error { return protected(abs, dataDir, asWorkspace) }

func protected(abs, dataDir string, k kind) error {
	if abs == string(filepath.Separator) {
		return fmt.Errorf("the %s %q is the root of the file system, which holds your home folder and Tally's data; %s", k.noun, abs, k.instead)
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if within(resolved(home), abs) {
			return fmt.Errorf("the %s %q is your home folder or contains it, where the agent could read your keys and change your shell's startup files; %s", k.noun, abs, k.instead)
		}
	}
	if dataDir != "" && within(resolved(dataDir), abs) {
		return fmt.Errorf("the %s %q is or contains Tally's data directory %s, which holds every session and the API key; %s", k.noun, abs, dataDir, k.instead)
	}
	return nil
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolved is dir made absolute with its symlinks resolved as far as it
// exists.
func resolved(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// Resolve resolves dir to an existing folder's absolute,
// symlink-free path.
func Resolve(dir string) (string, error) { return resolve(dir, asWorkspace) }

func resolve(dir string, k kind) (string, error) {
	if dir == "" {
		return "", errors.New("no workspace folder given; choose the project folder the agent may work in")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s %q cannot be resolved: %w", k.noun, dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%s %q does not exist; create it or pick an existing folder", k.noun, dir)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s %q is a file, not a folder; pick a folder", k.noun, dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// Roots checks the additional folders dirs of a session working in ws
// (already checked) and returns them resolved, in order: each must be an
// absolute path to a folder Check accepts that does not hold ws. A
// folder inside ws or inside an earlier one, or named twice, is left out,
// as its files are in reach already; one that holds an earlier folder
// replaces it. None, or none left, is nil.
func Roots(ws string, dirs []string, dataDir string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("the additional folder %q is not an absolute path; give it in full", d)
		}
		abs, err := check(d, dataDir, asRoot)
		if err != nil {
			return nil, err
		}
		switch {
		case within(ws, abs) && ws != abs:
			return nil, fmt.Errorf("the additional folder %q holds the workspace %s; open %s as the workspace instead", d, ws, abs)
		case within(abs, ws):
			continue
		}
		kept := out[:0]
		inside := false
		for _, o := range out {
			switch {
			case within(abs, o):
				inside = true
				kept = append(kept, o)
			case !within(o, abs):
				kept = append(kept, o)
			}
		}
		out = kept
		if !inside {
			out = append(out, abs)
		}
	}
	return out, nil
}
