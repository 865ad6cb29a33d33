// Package ownpaths names every file and folder Tally keeps for itself: its
// configuration folder (settings files, the MCP servers' headers, the
// keychain's fallback file with OAuth tokens and keys), every data folder
// it has opened (sessions and, without a keychain, profile keys), and its
// cache folder (logs, the sandbox's build caches). [Hidden] is the one list
// the sandbox hides from every command, language server, hook and
// workspace MCP server Tally starts, whichever data folder the session
// uses; a user's skills stay readable, since a skill may ship scripts the
// model runs.
package ownpaths

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// knownFile lists, one per line, the data folders Tally has opened; it is
// kept in the configuration folder, which no command can read or write.
const knownFile = "data-folders"

// maxKnown bounds the remembered data folders; the oldest are forgotten
// first, and folders that no longer exist are dropped at every write.
const maxKnown = 64

// SkillsFolder is the folder of the configuration folder that stays
// readable to commands (see [Readable]).
const SkillsFolder = "skills"

// ConfigDir returns Tally's configuration folder:
// $XDG_CONFIG_HOME/tally when XDG_CONFIG_HOME is an absolute path,
// otherwise tally under os.UserConfigDir (~/.config/tally on Linux).
func ConfigDir() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		d, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("the user config folder is unknown (%w); set XDG_CONFIG_HOME", err)
		}
		dir = d
	}
	return filepath.Join(dir, "tally"), nil
}

// CacheDir returns Tally's cache folder (tally under os.UserCacheDir), ""
// when there is none.
func CacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "tally")
}

// DataDir returns the data folder Tally uses when no --data folder is
// given (see [DataDirFor]).
func DataDir() (string, error) {
	return DataDirFor(runtime.GOOS, os.Getenv, os.UserHomeDir)
}

// DataDirFor returns the default data folder on goos with the environment
// getenv and the home folder home: $TALLY_DATA if set; otherwise
// $XDG_DATA_HOME/tally or ~/.local/share/tally on Linux and other Unix
// systems, ~/Library/Application Support/Tally on macOS and
// %AppData%\Tally on Windows. It does not create anything; its error says
// to set TALLY_DATA.
func DataDirFor(goos string, getenv func(string) string, home func() (string, error)) (string, error) {
	if dir := getenv("TALLY_DATA"); dir != "" {
		return dir, nil
	}
	switch goos {
	case "windows":
		dir := getenv("AppData")
		if dir == "" {
			return "", errors.New("%AppData% is not set, so there is no default data directory; set TALLY_DATA or use --data")
		}
		return filepath.Join(dir, "Tally"), nil
	case "darwin", "ios":
		h, err := home()
		if err != nil || h == "" {
			return "", homeError(err)
		}
		return filepath.Join(h, "Library", "Application Support", "Tally"), nil
	}
	if dir := getenv("XDG_DATA_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "tally"), nil
	}
	h, err := home()
	if err != nil || h == "" {
		return "", homeError(err)
	}
	return filepath.Join(h, ".local", "share", "tally"), nil
}

func homeError(cause error) error {
	if cause == nil {
		cause = errors.New("$HOME is empty")
	}
	return fmt.Errorf("cannot find the home directory (%v), so there is no default data directory; set TALLY_DATA or use --data", cause)
}

// mu serialises Remember within the process; two processes racing lose at
// most one line, which the next open writes again.
var mu sync.Mutex

// Remember records dir as a data folder Tally uses, so that sessions of
// every other data folder hide it too. It is best effort: a configuration
// folder that cannot be written leaves the list as it was.
func Remember(dir string) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	cfg, err := ConfigDir()
	if err != nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	known := readKnown(cfg)
	if i := slices.Index(known, dir); i >= 0 {
		if i == len(known)-1 {
			return
		}
		known = slices.Delete(known, i, i+1)
	}
	known = slices.DeleteFunc(append(known, dir), func(d string) bool {
		_, err := os.Stat(d)
		return err != nil
	})
	if len(known) > maxKnown {
		known = known[len(known)-maxKnown:]
	}
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		return
	}
	tmp := filepath.Join(cfg, knownFile+".tmp")
	if err := os.WriteFile(tmp, []byte(strings.Join(known, "\n")+"\n"), 0o600); err != nil {
		return
	}
	if err := os.Rename(tmp, filepath.Join(cfg, knownFile)); err != nil {
		os.Remove(tmp)
	}
}

// readKnown returns the remembered data folders, oldest first.
func readKnown(cfg string) []string {
	data, err := os.ReadFile(filepath.Join(cfg, knownFile))
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); filepath.IsAbs(line) && !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return out
}

// Hidden returns every path Tally keeps for itself, plus extra (such as
// the data folder of the session at hand): the configuration folder, the
// cache folder, the default data folder and every data folder Tally has
// opened. The sandbox grants none of them (see [Readable] for the one
// exception).
func Hidden(extra ...string) []string {
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil && !slices.Contains(out, abs) {
			out = append(out, abs)
		}
	}
	cfg, cfgErr := ConfigDir()
	if cfgErr == nil {
		add(cfg)
	}
	add(CacheDir())
	if d, err := DataDir(); err == nil {
		add(d)
	}
	if cfgErr == nil {
		for _, d := range readKnown(cfg) {
			add(d)
		}
	}
	for _, p := range extra {
		add(p)
	}
	return out
}

// Readable returns the folders inside [Hidden] that stay readable: the
// user's skills, whose scripts the model may be asked to run.
func Readable() []string {
	cfg, err := ConfigDir()
	if err != nil {
		return nil
	}
	return []string{filepath.Join(cfg, SkillsFolder)}
}
