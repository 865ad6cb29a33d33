package cli

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// visible reports whether safeText keeps r as it is: newlines and tabs,
// and every rune that is not a control or format character (escape
// sequences, carriage returns, bidi overrides) or a line separator.
func visible(r rune) bool {
	return r == '\n' || r == '\t' || !unicode.IsControl(r) && r != '\u2028' && r != '\u2029' && !unicode.Is(unicode.Cf, r)
}

// safeJSON is a JSON line with the control and format runes encoding/json
// leaves raw (C1 controls such as U+009B, an 8-bit CSI, and bidi
// overrides) written as \u escapes, so that --json output is as safe on a
// terminal as the human form. Such runes only occur inside JSON strings,
// where the escape means the same rune.
func safeJSON(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r < utf8.RuneSelf || visible(r) {
			if out != nil {
				out = append(out, b[i:i+n]...)
			}
			i += n
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(b)+16), b[:i]...)
		}
		out = fmt.Appendf(out, "\\u%04x", r)
		i += n
	}
	if out == nil {
		return b
	}
	return out
}

// safeText makes text from outside Tally (the model's reply, tool output,
// file names, provider errors) safe to print on a terminal: every rune
// visible does not keep is shown as a \uXXXX escape.
func safeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if visible(r) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	return b.String()
}
