package text

import (
	"testing"
	"unicode/utf8"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 1320: "1,320",
		12345: "12,345", 1234567: "1,234,567", -1: "-1", -999: "-999", -1000: "-1,000", -1234567: "-1,234,567"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	cases := []struct {
		n    int
		want string
	}{{0, "0 files"}, {1, "1 file"}, {2, "2 files"}, {1320, "1,320 files"}}
	for _, c := range cases {
		if got := Plural(c.n, "file"); got != c.want {
			t.Errorf("Plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if S(1) != "" || S(0) != "s" || S(2) != "s" {
		t.Error("S must be empty for one only")
	}
}

func TestClipNeverSplitsACharacter(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 4, "hell…"},
		{"héllo wörld", 4, "héll…"},
		{"日本語のテキスト", 3, "日本語…"},
		{"", 3, ""},
		{"abc", 0, "…"},
	}
	for _, c := range cases {
		got := Clip(c.in, c.n)
		if got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) split a character: %q", c.in, c.n, got)
		}
	}
}

func TestClipBytesStaysWithinTheLimit(t *testing.T) {
	in := "日本語のテキスト"
	for n := 0; n <= len(in)+1; n++ {
		got := ClipBytes(in, n)
		if !utf8.ValidString(got) {
			t.Fatalf("ClipBytes(%d) split a character: %q", n, got)
		}
		if len(got) > max(n, len(Ellipsis)) {
			t.Fatalf("ClipBytes(%d) = %d bytes", n, len(got))
		}
	}
	if ClipBytes("short", 10) != "short" {
		t.Error("text under the limit must come back unchanged")
	}
}

func TestOneLineAndFirstLine(t *testing.T) {
	if got := OneLine("  a\n\tb \r\n c  ", 0); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	if got := OneLine("one two three", 7); got != "one two…" {
		t.Errorf("OneLine clipped = %q", got)
	}
	if got := OneLine("bad \xff byte", 0); !utf8.ValidString(got) {
		t.Errorf("OneLine kept invalid UTF-8: %q", got)
	}
	if got := FirstLine("\n  \n  first line  \nsecond", 0); got != "first line" {
		t.Errorf("FirstLine = %q", got)
	}
	if got := FirstLine("héllo wörld\nnext", 5); got != "héllo…" {
		t.Errorf("FirstLine clipped = %q", got)
	}
	if FirstLine(" \n \r\n", 10) != "" {
		t.Error("blank text has no first line")
	}
}

// A first line shows no tab or control character: fonts draw a box for
// them.
func TestFirstLineHasNoControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"calc.go:12:\tfunc Add\n":      "calc.go:12: func Add",
		"\n\t\tindented\tline":         "indented line",
		"bell\a and\x1b[0m escape":     "bell  and [0m escape",
		"\t\n\tsecond line with tab\t": "second line with tab",
	} {
		if got := FirstLine(in, 0); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
