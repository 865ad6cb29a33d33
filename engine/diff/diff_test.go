package diff

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// numbered returns n lines "line 1\n" … "line n\n".
func numbered(n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("line %d\n", i))
	}
	return out
}

func join(lines []string) []byte { return []byte(strings.Join(lines, "")) }

// threeHunks returns a 40-line file and a version with three separate
// changes, far enough apart to form three hunks.
func threeHunks() (before, after []byte) {
	a := numbered(40)
	b := append([]string(nil), a...)
	b[2] = "changed 3\n"                                             // hunk 1
	b[19] = "changed 20\n"                                           // hunk 2
	b = append(b[:36], append([]string{"inserted\n"}, b[36:]...)...) // hunk 3
	return join(a), join(b)
}

func TestApplyRejectOneOfThree(t *testing.T) {
	before, after := threeHunks()
	d := Compute("f.txt", before, after, true)
	if len(d.Hunks) != 3 {
		t.Fatalf("got %d hunks, want 3:\n%s", len(d.Hunks), d.Unified())
	}
	got, err := Apply(before, d, []bool{true, false, true})
	if err != nil {
		t.Fatal(err)
	}
	want := numbered(40)
	want[2] = "changed 3\n"
	want = append(want[:36], append([]string{"inserted\n"}, want[36:]...)...)
	if !bytes.Equal(got, join(want)) {
		t.Fatalf("applied:\n%s\nwant:\n%s", got, join(want))
	}
	rej := d.Rejected([]bool{true, false, true})
	if len(rej) != 1 || rej[0] != "hunk 2 of 3 (@@ -17,7 +17,7 @@)" {
		t.Fatalf("Rejected = %q", rej)
	}
	all, _ := Apply(before, d, []bool{true, true, true})
	none, _ := Apply(before, d, nil)
	if !bytes.Equal(all, after) || !bytes.Equal(none, before) {
		t.Fatal("all hunks must give after, no hunk before")
	}
}

func TestApplyEverySubset(t *testing.T) {
	before, after := threeHunks()
	d := Compute("f.txt", before, after, true)
	for mask := range 8 {
		acc := []bool{mask&1 != 0, mask&2 != 0, mask&4 != 0}
		got, err := Apply(before, d, acc)
		if err != nil {
			t.Fatal(err)
		}
		// Applying the rest of the hunks to the result must give after.
		d2 := Compute("f.txt", got, after, true)
		if len(d2.Hunks) != 3-strings.Count(fmt.Sprint(acc), "true") {
			t.Fatalf("mask %d: %d hunks left, want the rejected ones", mask, len(d2.Hunks))
		}
	}
}

func TestNoNewlineAtEnd(t *testing.T) {
	before := []byte("a\nb\nc")
	after := []byte("a\nb\nc\nd")
	d := Compute("f", before, after, true)
	u := d.Unified()
	want := "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n b\n-c\n\\ No newline at end of file\n+c\n+d\n\\ No newline at end of file\n"
	if u != want {
		t.Fatalf("Unified:\n%q\nwant\n%q", u, want)
	}
	got, err := Apply(before, d, []bool{true})
	if err != nil || !bytes.Equal(got, after) {
		t.Fatalf("Apply = %q, %v", got, err)
	}
	checkPatch(t, before, after, u)
}

func TestNewAndDeletedFile(t *testing.T) {
	d := Compute("n.txt", []byte("ignored"), []byte("x\ny\n"), false)
	if !d.New || d.Deleted {
		t.Fatalf("new file flags: %+v", d)
	}
	if u := d.Unified(); u != "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n" {
		t.Fatalf("Unified = %q", u)
	}
	if got, _ := Apply(nil, d, []bool{true}); string(got) != "x\ny\n" {
		t.Fatalf("Apply new = %q", got)
	}
	del := Between("d.txt", []byte("x\ny\n"), nil, true, false)
	if !del.Deleted || del.New {
		t.Fatalf("deleted flags: %+v", del)
	}
	if u := del.Unified(); u != "--- a/d.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n" {
		t.Fatalf("Unified = %q", u)
	}
	empty := Compute("e", nil, nil, false)
	if !empty.Changed() || len(empty.Hunks) != 0 {
		t.Fatalf("a new empty file is a change without hunks: %+v", empty)
	}
}

func TestCRLF(t *testing.T) {
	before := []byte("one\r\ntwo\r\nthree\r\n")
	after := []byte("one\r\n2\r\nthree\r\n")
	d := Compute("w.txt", before, after, true)
	if len(d.Hunks) != 1 {
		t.Fatalf("hunks: %d", len(d.Hunks))
	}
	for _, l := range d.Hunks[0].Lines {
		if l.EOL != "\r\n" || strings.Contains(l.Text, "\r") {
			t.Fatalf("line %+v: want CRLF ending split off", l)
		}
	}
	got, err := Apply(before, d, []bool{true})
	if err != nil || !bytes.Equal(got, after) {
		t.Fatalf("Apply = %q, %v", got, err)
	}
	// A pure line-ending change is a change.
	if lf := Compute("w.txt", before, bytes.ReplaceAll(before, []byte("\r\n"), []byte("\n")), true); len(lf.Hunks) != 1 {
		t.Fatal("CRLF -> LF must show as a change")
	}
	checkPatch(t, before, after, d.Unified())
}

func TestBinary(t *testing.T) {
	d := Compute("b.bin", []byte("a\x00b"), []byte("a\x00c"), true)
	if !d.Binary || len(d.Hunks) != 0 {
		t.Fatalf("%+v", d)
	}
	if u := d.Unified(); u != "Binary files a/b.bin and b/b.bin differ\n" {
		t.Fatalf("Unified = %q", u)
	}
	if _, err := Apply([]byte("a\x00b"), d, []bool{true}); err == nil {
		t.Fatal("Apply of a binary diff must fail")
	}
	if !Compute("u", []byte("ok"), []byte{0xff, 0xfe}, true).Binary {
		t.Fatal("invalid UTF-8 must count as binary")
	}
	if Compute("same", []byte("a\x00"), []byte("a\x00"), true).Changed() {
		t.Fatal("equal binary content is no change")
	}
}

func TestApplyStaleBefore(t *testing.T) {
	before, after := threeHunks()
	d := Compute("f", before, after, true)
	stale := bytes.Replace(before, []byte("line 20\n"), []byte("user edit\n"), 1)
	if _, err := Apply(stale, d, []bool{true, true, true}); err == nil {
		t.Fatal("Apply onto changed content must fail")
	}
	if _, err := Apply([]byte("short\n"), d, []bool{true}); err == nil {
		t.Fatal("Apply onto a shorter file must fail")
	}
	if s := d.Describe(7); !strings.Contains(s, "no such hunk") {
		t.Fatalf("Describe(7) = %q", s)
	}
}

// checkPatch feeds the unified diff to patch(1), when it is installed, to
// check that the text is a standard diff.
func checkPatch(t *testing.T, before, after []byte, unified string) {
	t.Helper()
	if _, err := exec.LookPath("patch"); err != nil {
		return
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "file")
	if err := os.WriteFile(f, before, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("patch", "--binary", "-s", f)
	cmd.Stdin = strings.NewReader(unified)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch refused the diff: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(f)
	if !bytes.Equal(got, after) {
		t.Fatalf("patch gave %q, want %q", got, after)
	}
}

// Apply's errors reach the approval card and the command line: they read
// as plain sentences naming the file, without the package's name first.
func TestApplyErrorsArePlainSentences(t *testing.T) {
	bin := Compute("b.bin", []byte("a\x00b"), []byte("a\x00c"), true)
	text := Compute("f.txt", []byte("a\nb\nc\n"), []byte("a\nB\nc\n"), true)
	for name, apply := range map[string]func() error{
		"binary":  func() error { _, err := Apply([]byte("a\x00b"), bin, []bool{true}); return err },
		"changed": func() error { _, err := Apply([]byte("a\nx\nc\n"), text, []bool{true}); return err },
		"shorter": func() error { _, err := Apply([]byte("a\n"), text, []bool{true}); return err },
	} {
		err := apply()
		if err == nil || strings.HasPrefix(err.Error(), "diff:") || !strings.Contains(err.Error(), ".") {
			t.Errorf("%s: %v; want a plain sentence naming the file", name, err)
		}
	}
}
