package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tally-dev/tally/internal/fyneprefs"
	"github.com/tally-dev/tally/ui"
)

// Before the window opens, an empty preferences file of the app (left by
// a kill while the toolkit rewrote it) is removed, so the toolkit logs no
// "Preferences load error: EOF".
func TestEmptyPreferencesAreRepairedBeforeTheApp(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd":
	default:
		t.Skip("the test sets XDG_CONFIG_HOME")
	}
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	path := fyneprefs.Path(ui.AppID)
	if path != filepath.Join(cfg, "fyne", ui.AppID, "preferences.json") {
		t.Fatalf("Path = %q", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	repairPreferences(&stderr)
	if _, err := os.Stat(path); !os.IsNotExist(err) || stderr.Len() != 0 {
		t.Errorf("the empty file: %v; stderr %q", err, stderr.String())
	}
}
