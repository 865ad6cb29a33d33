package shellword

import "testing"

func TestUnescape(t *testing.T) {
	for _, c := range []struct {
		in     string
		quoted bool
		want   string
	}{
		{`plain`, false, `plain`},
		{`my\ hook.sh`, false, `my hook.sh`},
		{`a\\b`, false, `a\b`},
		{"a\\\nb", false, "ab"},
		{`a\nb`, false, `anb`},
		{`a\nb`, true, `a\nb`},
		{`\$HOME \"x\"`, true, `$HOME "x"`},
		{`end\`, false, `end\`},
	} {
		if got := Unescape(c.in, c.quoted); got != c.want {
			t.Errorf("Unescape(%q, %v) = %q, want %q", c.in, c.quoted, got, c.want)
		}
	}
}

func TestParseReportsBadInput(t *testing.T) {
	if _, err := Parse(`echo "unterminated`); err == nil {
		t.Fatal("an unterminated quote parsed without error")
	}
	f, err := Parse(`"tools/my hook.sh" --flag`)
	if err != nil || len(f.Stmts) != 1 {
		t.Fatalf("Parse = %v, %v; want one statement", f, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`echo hi`, `a && b | c`, `"x y" 'z' $(q)`, `cat <<EOF`, `${a:-b}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, err := Parse(src)
		if err == nil && file == nil {
			t.Fatal("no file and no error")
		}
		for _, q := range []bool{false, true} {
			if out := Unescape(src, q); len(out) > len(src) {
				t.Fatalf("Unescape grew %q to %q", src, out)
			}
		}
	})
}
