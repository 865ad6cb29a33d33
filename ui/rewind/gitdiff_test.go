package rewind

import (
	"reflect"
	"testing"

	"github.com/tally-dev/tally/engine/diff"
)

// What git prints reads back into the diffs the engine computes: the
// same files, hunks, kinds, texts and line numbers.
func TestParseGitDiffReadsBackTheEnginesDiffs(t *testing.T) {
	before := []byte("package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\nfunc Mul(a, b int) int { return a * b }\n")
	after := []byte("package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc Mul(a, b int) int { return a * b }\n\n-- x\n++ y\n")
	want := []diff.Diff{
		diff.Compute("calc/calc.go", before, after, true),
		diff.Compute("notes.txt", nil, []byte("one\ntwo"), false),
		diff.Between("old.txt", []byte("gone\n"), nil, true, false),
	}
	text := ""
	for _, d := range want {
		text += "diff --git a/" + d.Path + " b/" + d.Path + "\n"
		switch {
		case d.New:
			text += "new file mode 100644\nindex 0000000..5626abf\n"
		case d.Deleted:
			text += "deleted file mode 100644\nindex 5626abf..0000000\n"
		default:
			text += "index 1234567..89abcde 100644\n"
		}
		text += d.Unified()
	}
	got := ParseGitDiff(text)
	for i := range want {
		for k := range want[i].Hunks {
			for j := range want[i].Hunks[k].Lines {
				want[i].Hunks[k].Lines[j].EOL = "" // not in what is drawn
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back:\n%+v\nwant:\n%+v", got, want)
	}
}

// Renames, binary files and names git quotes.
func TestParseGitDiffNamesEveryFile(t *testing.T) {
	text := `diff --git a/a.txt b/b.txt
similarity index 80%
rename from a.txt
rename to b.txt
index 1111111..2222222 100644
--- a/a.txt
+++ b/b.txt
@@ -1 +1 @@
-x
+y
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..3333333
Binary files /dev/null and b/logo.png differ
diff --git "a/my file.txt" "b/my file.txt"
new file mode 100644
index 0000000..e69de29
`
	got := ParseGitDiff(text)
	if len(got) != 3 {
		t.Fatalf("%d files: %+v", len(got), got)
	}
	if got[0].Path != "b.txt" || len(got[0].Hunks) != 1 || len(got[0].Hunks[0].Lines) != 2 {
		t.Errorf("the rename: %+v", got[0])
	}
	if got[1].Path != "logo.png" || !got[1].Binary || !got[1].New {
		t.Errorf("the picture: %+v", got[1])
	}
	if got[2].Path != "my file.txt" || !got[2].New || len(got[2].Hunks) != 0 {
		t.Errorf("the empty new file with a space in its name: %+v", got[2])
	}
	if ParseGitDiff("not a diff") != nil {
		t.Error("text without a diff gave files")
	}
}
