package ui

import (
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// tokensShort renders a token count for people: 950, 84.2k, 1.2M.
func tokensShort(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		v := float64(n) / 1000
		if v >= 100 || v == math.Trunc(v) {
			return fmt.Sprintf("%.0fk", v)
		}
		return fmt.Sprintf("%.1fk", v)
	default:
		v := float64(n) / 1e6
		if v == math.Trunc(v) {
			return fmt.Sprintf("%.0fM", v)
		}
		return fmt.Sprintf("%.2fM", v)
	}
}

// thousands renders n with thousands separators: 12,345.
func thousands(n int) string {
	s := fmt.Sprintf("%d", n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// dollars renders a cost: $0.0123, $1.24.
func dollars(v float64) string {
	switch {
	case v == 0:
		return "$0.00"
	case v < 1:
		return fmt.Sprintf("$%.4f", v)
	case v < 100:
		return fmt.Sprintf("$%.2f", v)
	default:
		return fmt.Sprintf("$%.0f", v)
	}
}

// duration renders a request duration: 850 ms, 1.8 s, 2 min 5 s.
func duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	default:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
}

// ago renders how long ago t was: "just now", "5 min ago", "3 h ago", a date.
func ago(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "never"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	case d < 7*24*time.Hour:
		return fmt.Sprintf("%d d ago", int(d.Hours()/24))
	default:
		return t.Format("2 Jan 2006")
	}
}

// maxShown is how much of a tool result or argument text is shown at most.
const maxShown = 4000

// clipForDisplay makes text safe and small enough to show: binary data is
// summarised, and long text is cut at maxShown characters with a note
// saying how much more there is.
func clipForDisplay(s string) string {
	if isBinary(s) {
		return fmt.Sprintf("(binary output, %s bytes, not shown)", thousands(len(s)))
	}
	n := utf8.RuneCountInString(s)
	if n <= maxShown {
		return s
	}
	cut := 0
	for i := range s {
		if cut == maxShown {
			return s[:i] + fmt.Sprintf("\n… %s more chars", thousands(n-maxShown))
		}
		cut++
	}
	return s
}

func isBinary(s string) bool {
	if strings.IndexByte(s, 0) >= 0 {
		return true
	}
	if utf8.ValidString(s) {
		return false
	}
	bad := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			bad++
		}
		i += size
	}
	return bad*10 > len(s)
}

// firstLine returns the first line of s, cut to n runes.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if utf8.RuneCountInString(s) > n {
		r := []rune(s)
		return string(r[:n]) + "…"
	}
	return s
}

// fadeRGBA turns a 16-bit colour into a translucent 8-bit one for
// backgrounds behind text.
func fadeRGBA(r, g, b uint32) color.NRGBA {
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 70}
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
