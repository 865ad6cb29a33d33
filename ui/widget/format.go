package widget

import (
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/internal/text"
)

// TokensShort renders a token count for people: 950, 84.2k, 1.2M. Counts
// under a thousand are exact; larger ones keep at most one decimal (two
// for millions) and drop a trailing ".0".
func TokensShort(n int) string {
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

// Dollars renders a cost: "$0.00" for nothing, four decimals under a
// dollar ($0.0123), two under a hundred ($1.24), none above.
func Dollars(v float64) string {
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

// Duration renders a request's duration: 850 ms, 1.8 s, 2 min 5 s.
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	default:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
}

// Ago renders how long before now t was: "never" for the zero time, "just
// now", "5 min ago", "3 h ago", "2 d ago", then the date.
func Ago(t, now time.Time) string {
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

// RoundPercent rounds a percentage to the one decimal Percent shows, so
// that a rule over the shown number (the cache chip's colour) and the
// text agree on its edges.
func RoundPercent(p float64) float64 { return math.Round(p*10) / 10 }

// Percent renders a percentage rounded by RoundPercent: "80 %" when the
// rounded value is whole, "79.3 %" otherwise.
func Percent(p float64) string {
	r := RoundPercent(p)
	if r == math.Trunc(r) {
		return fmt.Sprintf("%.0f %%", r)
	}
	return fmt.Sprintf("%.1f %%", r)
}

// UpperFirst returns s with its first byte in upper case, for turning an
// error's text into the start of a sentence.
func UpperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Sentence makes an engine message one to show: first letter up, ending
// in a full stop.
func Sentence(s string) string {
	s = UpperFirst(strings.TrimSpace(s))
	if s != "" && !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// MaxShown is how many characters of a tool result or argument text
// ClipForDisplay keeps at most.
const MaxShown = 4000

// ClipForDisplay makes text safe and small enough to show: binary data is
// summarised by its size, and text longer than MaxShown characters is cut
// there (never inside a character) with a note saying how much more there
// is.
func ClipForDisplay(s string) string {
	if isBinary(s) {
		return fmt.Sprintf("(binary output, %s bytes, not shown)", text.Thousands(len(s)))
	}
	n := utf8.RuneCountInString(s)
	if n <= MaxShown {
		return s
	}
	return strings.TrimSuffix(text.Clip(s, MaxShown), text.Ellipsis) +
		fmt.Sprintf("\n… %s more chars", text.Thousands(n-MaxShown))
}

// isBinary reports whether s holds a NUL byte or is more than a tenth
// invalid UTF-8.
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

// fadeRGBA turns a 16-bit colour into a translucent 8-bit one for
// backgrounds behind text.
func fadeRGBA(r, g, b uint32) color.NRGBA {
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 70}
}

// MaxListedDiagnostics caps the lines listed for one file; the rest are
// counted.
const MaxListedDiagnostics = 50

// SeverityImportance is the colour of one listed diagnostic.
func SeverityImportance(severity string) widget.Importance {
	if severity == "error" {
		return widget.DangerImportance
	}
	return widget.WarningImportance
}
