package agent

import (
	"path/filepath"

	"github.com/tally-dev/tally/internal/workspace"
)

// CheckWorkspace is workspace.Check: the one rule the command line, the
// app's New-session dialog and the engine use for a session's folder; a
// stored session whose workspace breaks it runs no turn.
func CheckWorkspace(dir, dataDir string) (string, error) { return workspace.Check(dir, dataDir) }

// dataDir is the folder of the session store's file, "" without one.
func (c *Config) dataDir() string {
	if c.Store == nil || c.Store.Path() == "" {
		return ""
	}
	return filepath.Dir(c.Store.Path())
}

// CheckRoots is workspace.Roots: the one rule for the additional folders
// dirs of a session in ws (see Config.Roots), which the app's New-session
// dialog uses too.
func CheckRoots(ws string, dirs []string, dataDir string) ([]string, error) {
	return workspace.Roots(ws, dirs, dataDir)
}

// roots checks the additional folders dirs of a session in ws.
func (c *Config) roots(ws string, dirs []string) ([]string, error) {
	return CheckRoots(ws, dirs, c.dataDir())
}

// present keeps the stored folders dirs of a session in ws that still
// pass the rule: one deleted since is dropped, and the session opens
// without it rather than not at all.
func (c *Config) present(ws string, dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if r, err := c.roots(ws, []string{d}); err == nil {
			out = append(out, r...)
		}
	}
	return out
}
