package tool

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var envelopeRE = regexp.MustCompile(`\[\.\.\. truncated: original ([0-9,]+) bytes, omitted ([0-9,]+); [^\]]* \.\.\.\]`)

// checkEnvelope verifies the envelope's counts against the kept text and
// returns the kept bytes (head plus tail).
func checkEnvelope(t *testing.T, orig, got string) int {
	t.Helper()
	m := envelopeRE.FindStringSubmatchIndex(got)
	if m == nil {
		t.Fatalf("no envelope in %q", got)
	}
	total := atoiCommas(t, got[m[2]:m[3]])
	omitted := atoiCommas(t, got[m[4]:m[5]])
	if total != len(orig) {
		t.Errorf("envelope says original %d bytes, want %d", total, len(orig))
	}
	head := strings.TrimSuffix(got[:m[0]], "\n")
	tail := strings.TrimPrefix(got[m[1]:], "\n")
	if !strings.HasPrefix(orig, head) || !strings.HasSuffix(orig, tail) {
		t.Errorf("kept text is not the head and tail of the original")
	}
	// Head and tail may have absorbed the newline separators, so count
	// what is kept from the original.
	kept := len(orig) - omitted
	if kept < len(head)+len(tail) || kept > len(head)+len(tail)+2 {
		t.Errorf("omitted %d does not match kept head %d + tail %d of %d", omitted, len(head), len(tail), len(orig))
	}
	return kept
}

func atoiCommas(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTruncate(t *testing.T) {
	lines := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "line %05d of the output\n", i)
		}
		return b.String()
	}
	cases := []struct {
		name  string
		s     string
		limit int
	}{
		{"ascii without newlines", strings.Repeat("x", 48213), 12000},
		{"many lines", lines(2000), 12000},
		{"multibyte runes at every cut", strings.Repeat("日本語🙂", 5000), 1001},
		{"combining and 4-byte runes", strings.Repeat("é🙂a", 997), 37},
		{"limit one", "héllo wörld", 1},
		{"limit zero", "hello", 0},
		{"negative limit", "hello", -5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Truncate(tc.s, tc.limit)
			if !utf8.ValidString(got) {
				t.Fatalf("output is not valid UTF-8")
			}
			kept := checkEnvelope(t, tc.s, got)
			if kept > max(tc.limit, 0)+2 {
				t.Errorf("kept %d bytes, limit %d", kept, tc.limit)
			}
			if tc.limit >= 1000 && kept < tc.limit*3/4-100 {
				t.Errorf("kept only %d bytes of a %d limit", kept, tc.limit)
			}
		})
	}

	t.Run("unchanged at or under the limit", func(t *testing.T) {
		for _, s := range []string{"", "short", strings.Repeat("ü", 6000)} {
			if got := Truncate(s, len(s)); got != s {
				t.Errorf("Truncate changed a %d-byte string at limit %d", len(s), len(s))
			}
		}
	})
	t.Run("exact counts", func(t *testing.T) {
		s := strings.Repeat("a", 48213)
		got := Truncate(s, 12000)
		mustContain(t, got, "original 48,213 bytes, omitted 36,213;", "read a narrower range")
		if len(got) > 12000+200 {
			t.Errorf("result is %d bytes", len(got))
		}
	})
	t.Run("cuts at line boundaries when near", func(t *testing.T) {
		got := Truncate(lines(2000), 12000)
		head := got[:strings.Index(got, "[...")]
		if !strings.HasSuffix(head, " output\n") {
			t.Errorf("head does not end on a line boundary: %q", head[len(head)-30:])
		}
	})
}
