package tool

import (
	"strings"
	"unicode/utf8"

	"github.com/tally-dev/tally/internal/text"
)

// IntakeLimit is the largest result, in bytes, that [Registry.Run] hands back
// to the model; longer results are shortened with [Truncate].
const IntakeLimit = 12000

const defaultTruncateHint = "read a narrower range, or use a tighter pattern or filter, to see the rest"

// Truncate shortens s to about limit bytes by keeping its head and its tail
// and putting an explicit envelope between them, for example
//
//	[... truncated: original 48,213 bytes, omitted 36,213; read a narrower range, or use a tighter pattern or filter, to see the rest ...]
//
// The kept head and tail together are at most limit bytes; the envelope comes
// on top. Cuts fall on UTF-8 rune boundaries (and, when one is close, on line
// boundaries), so valid UTF-8 input gives valid UTF-8 output. s is returned
// unchanged when len(s) <= limit. A limit of zero or less keeps nothing but
// the envelope.
func Truncate(s string, limit int) string {
	return truncate(s, limit, defaultTruncateHint)
}

func truncate(s string, limit int, hint string) string {
	if len(s) <= limit {
		return s
	}
	if limit < 0 {
		limit = 0
	}
	headLen := limit / 2
	tailLen := limit - headLen
	head := cutHead(s, headLen)
	tail := cutTail(s, tailLen)
	return joinEnvelope(head, tail, len(s), hint)
}

// joinEnvelope joins the kept head and tail of a text of total bytes with
// the truncation envelope between them.
func joinEnvelope(head, tail string, total int, hint string) string {
	omitted := total - len(head) - len(tail)
	var b strings.Builder
	b.Grow(len(head) + len(tail) + 160)
	b.WriteString(head)
	if head != "" && !strings.HasSuffix(head, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("[... truncated: original ")
	b.WriteString(text.Thousands(total))
	b.WriteString(" bytes, omitted ")
	b.WriteString(text.Thousands(omitted))
	if hint != "" {
		b.WriteString("; ")
		b.WriteString(hint)
	}
	b.WriteString(" ...]")
	if tail != "" {
		b.WriteByte('\n')
	}
	b.WriteString(tail)
	return b.String()
}

// cutHead returns the longest prefix of s of at most n bytes that ends on a
// rune boundary, preferring to end just after a newline when one falls in
// the last quarter of the prefix.
func cutHead(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	head := s[:n]
	if i := strings.LastIndexByte(head, '\n'); i >= 0 && i+1 >= n-n/4 {
		head = head[:i+1]
	}
	return head
}

// cutTail returns the longest suffix of s of at most n bytes that starts on
// a rune boundary, preferring to start just after a newline when one falls
// in the first quarter of the suffix.
func cutTail(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	start := len(s) - n
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	tail := s[start:]
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/4 {
		tail = tail[i+1:]
	}
	return tail
}
