// Package userconfig names the files a user keeps Tally's own
// configuration in (mcp.json, lsp.json): $XDG_CONFIG_HOME/tally when
// XDG_CONFIG_HOME is an absolute path, otherwise tally under
// os.UserConfigDir (~/.config/tally on Linux).
package userconfig

import (
	"fmt"
	"os"
	"path/filepath"
)

// File returns the path of the user's configuration file name.
func File(name string) (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		d, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("the user config folder is unknown (%w); set XDG_CONFIG_HOME", err)
		}
		dir = d
	}
	return filepath.Join(dir, "tally", name), nil
}
