// Package text holds the few rules Tally uses to shape short text for
// people and for the model: numbers with thousands separators, counts with
// their noun, and lines cut to a length without splitting a character.
// Every package formats with these, so the same number or title reads the
// same wherever it is shown.
package text

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks where Clip, ClipBytes, FirstLine and OneLine cut text.
const Ellipsis = "…"

// Thousands renders n with comma thousands separators: 12345 → "12,345",
// -1000 → "-1,000".
func Thousands(n int) string {
	s := strconv.Itoa(n)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	b.Grow(len(sign) + len(s) + len(s)/3)
	b.WriteString(sign)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Plural renders a count with its noun: "1 file", "2 files",
// "1,320 tokens". The plural adds "s" to noun.
func Plural(n int, noun string) string {
	if n == 1 || n == -1 {
		return Thousands(n) + " " + noun
	}
	return Thousands(n) + " " + noun + "s"
}

// S returns "s" unless n is 1, for phrases whose number is written apart
// from its noun.
func S(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Clip cuts s to its first n runes and marks the cut with Ellipsis; text
// of n runes or fewer comes back unchanged. It never splits a character,
// and invalid UTF-8 counts one rune a byte.
func Clip(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n { // fewer bytes than n means fewer runes
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	if i >= len(s) {
		return s
	}
	return s[:i] + Ellipsis
}

// ClipBytes cuts s to at most n bytes, the Ellipsis included, on a rune
// boundary: for limits that bound stored or sent bytes rather than what a
// person reads.
func ClipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := n - len(Ellipsis)
	if end < 0 {
		end = 0
	}
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + Ellipsis
}

// OneLine collapses every run of white space in s, line breaks included,
// to one space, trims the ends, replaces invalid UTF-8 with U+FFFD and
// clips the result to n runes (no limit when n <= 0).
func OneLine(s string, n int) string {
	out := strings.Join(strings.Fields(s), " ")
	if !utf8.ValidString(out) {
		out = strings.ToValidUTF8(out, "\uFFFD")
	}
	if n > 0 {
		out = Clip(out, n)
	}
	return out
}

// FirstLine returns the first line of s that is not blank, trimmed and
// clipped to n runes (no limit when n <= 0). A tab or other control
// character in it becomes a space: a line shown on its own has no column
// to align, and fonts draw no glyph for them (a box instead).
func FirstLine(s string, n int) string {
	for len(s) > 0 {
		line := s
		if i := strings.IndexAny(s, "\r\n"); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if line = strings.TrimSpace(strings.Map(noControl, line)); line != "" {
			if n > 0 {
				return Clip(line, n)
			}
			return line
		}
	}
	return ""
}

// noControl maps a control character to a space.
func noControl(r rune) rune {
	if unicode.IsControl(r) {
		return ' '
	}
	return r
}
