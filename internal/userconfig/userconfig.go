// Package userconfig names the files a user keeps Tally's own
// configuration in (mcp.json, lsp.json, hooks.json, the keychain's
// fallback file), all in the folder [ownpaths.ConfigDir] names.
package userconfig

import (
	"path/filepath"

	"github.com/tally-dev/tally/internal/ownpaths"
)

// File returns the path of the user's configuration file name.
func File(name string) (string, error) {
	dir, err := ownpaths.ConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}
