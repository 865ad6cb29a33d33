package ownpaths

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func setHome(t *testing.T) string {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "TALLY_DATA"} {
		t.Setenv(v, "")
	}
	return home
}

func TestHiddenCoversConfigCacheDefaultAndRememberedDataFolders(t *testing.T) {
	home := setHome(t)
	other := filepath.Join(home, "projects", "data")
	os.MkdirAll(other, 0o755)
	Remember(other)
	got := Hidden("/srv/session")
	for _, want := range []string{
		filepath.Join(home, ".config", "tally"), filepath.Join(home, ".cache", "tally"),
		filepath.Join(home, ".local", "share", "tally"), other, "/srv/session",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("Hidden() = %v, lacks %s", got, want)
		}
	}
	if r := Readable(); len(r) != 1 || r[0] != filepath.Join(home, ".config", "tally", SkillsFolder) {
		t.Errorf("Readable() = %v, want the skills folder", r)
	}
}

func TestRememberIsBoundedAndForgetsFoldersThatAreGone(t *testing.T) {
	home := setHome(t)
	gone := filepath.Join(home, "gone")
	os.MkdirAll(gone, 0o755)
	Remember(gone)
	os.RemoveAll(gone)
	for i := range maxKnown + 5 {
		d := filepath.Join(home, fmt.Sprint("d", i))
		os.MkdirAll(d, 0o755)
		Remember(d)
	}
	cfg, _ := ConfigDir()
	known := readKnown(cfg)
	if len(known) != maxKnown || slices.Contains(known, gone) || known[len(known)-1] != filepath.Join(home, fmt.Sprint("d", maxKnown+4)) {
		t.Errorf("known = %d folders (gone kept: %v), newest %q", len(known), slices.Contains(known, gone), known[len(known)-1])
	}
}

func TestDataDirForTallyData(t *testing.T) {
	env := map[string]string{"TALLY_DATA": "/data"}
	if d, err := DataDirFor("linux", func(k string) string { return env[k] }, os.UserHomeDir); err != nil || d != "/data" {
		t.Errorf("DataDirFor = %q, %v", d, err)
	}
}
