package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRootsAreCheckedAndOverlapsFolded(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := func(p string) string {
		d := filepath.Join(base, p)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	ws, lib, libSub, other, data := dir("proj/app"), dir("lib"), dir("lib/sub"), dir("other"), dir("data")
	inWS := dir("proj/app/vendor")

	got, err := Roots(ws, []string{libSub, other, lib, inWS, other}, data)
	if err != nil || !slices.Equal(got, []string{other, lib}) {
		t.Errorf("Roots = %v, %v; want [%s %s]", got, err, other, lib)
	}
	if got, err := Roots(ws, nil, data); got != nil || err != nil {
		t.Errorf("no folders: %v, %v", got, err)
	}
	for _, c := range []struct{ dir, want string }{
		{"lib", "not an absolute path"},
		{filepath.Join(base, "proj"), "holds the workspace"},
		{filepath.Join(base, "missing"), "does not exist"},
		{base, "Tally's data directory"},
		{"/", "root of the file system"},
	} {
		if _, err := Roots(ws, []string{c.dir}, data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Roots(%s) = %v; want an error saying %q", c.dir, err, c.want)
		}
	}
}
