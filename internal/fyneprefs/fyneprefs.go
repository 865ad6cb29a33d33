// Package fyneprefs keeps the GUI toolkit's preferences file one the
// toolkit reads without an error. Fyne rewrites the file in place
// (truncate, then write), so a process killed in between leaves it empty
// or cut short, and the next start logged "Preferences load error: EOF".
// [Repair], called before the app is made, removes an empty file (the
// toolkit then starts with no preferences, as on a first run) and moves a
// damaged one aside; the toolkit's own API stays the only reader and
// writer of the file.
package fyneprefs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// fileName is the toolkit's name of the preferences file.
const fileName = "preferences.json"

// maxSize bounds the file Repair reads; a larger one is left to the
// toolkit.
const maxSize = 16 << 20

// Path returns the file the toolkit keeps the preferences of the app id
// in: preferences.json in the app's folder of the toolkit's
// configuration folder (~/.config/fyne/<id> on Linux,
// ~/Library/Preferences/fyne/<id> on macOS, %AppData%\fyne\<id> on
// Windows), "" when the folder is unknown.
func Path(id string) string {
	var root string
	switch runtime.GOOS {
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		root = filepath.Join(home, "Library", "Preferences")
	case "windows":
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		root = filepath.Join(home, "AppData", "Roaming")
	case "linux", "freebsd", "openbsd", "netbsd":
		dir, err := os.UserConfigDir()
		if err != nil {
			return ""
		}
		root = dir
	default:
		return ""
	}
	return filepath.Join(root, "fyne", id, fileName)
}

// Repair makes the preferences file at path readable by the toolkit: an
// empty (or blank) file is removed, and one that is not a JSON object is
// renamed to path+".damaged", replacing an older one. A missing file, or
// "" for path, is left alone. It returns what it did, "" for nothing, and
// an error when the file could not be read, removed or renamed.
func Repair(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("the preferences file %s cannot be read (%w); check its folder's permissions", path, err)
	case !fi.Mode().IsRegular() || fi.Size() > maxSize:
		return "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the preferences file %s cannot be read (%w); check its permissions", path, err)
	}
	if strings.TrimSpace(string(data)) == "" {
		if err := os.Remove(path); err != nil {
			return "", fmt.Errorf("the empty preferences file %s cannot be removed (%w); remove it by hand", path, err)
		}
		return "removed the empty " + path, nil
	}
	var values map[string]any
	if json.Unmarshal(data, &values) == nil {
		return "", nil
	}
	if err := os.Rename(path, path+".damaged"); err != nil {
		return "", fmt.Errorf("the damaged preferences file %s cannot be moved aside (%w); remove it by hand", path, err)
	}
	return "moved the damaged " + path + " to " + path + ".damaged", nil
}
