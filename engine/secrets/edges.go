package secrets

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// edges finds word and line boundaries in one text for [reach.window]. It
// remembers what it found, so that a whole scan, whose queries mostly move
// forward, costs time linear in the text however many keywords occur.
type edges struct {
	text  string
	ascii bool // all bytes are ASCII, so characters are bytes
	// For every i in [endFrom, endTo], the next whitespace at or after i is
	// at endTo; for every i in [startTo, startFrom], the word holding i
	// starts at startTo.
	endFrom, endTo     int
	startTo, startFrom int
	newlines           []int // offsets of every '\n', found on first use
	newlinesFound      bool
}

func newEdges(text string) *edges {
	return &edges{text: text, ascii: isASCII(text), endFrom: -1, endTo: -1, startTo: -1, startFrom: -1}
}

// window returns the part of the text r's regex must see to find every
// match that contains text[start:end].
func (e *edges) window(r reach, start, end int) (lo, hi int) {
	switch r.span {
	case spanWord:
		lo, hi = e.back(end, r.maxLen), e.ahead(start, r.maxLen)
		for range r.runs {
			lo, hi = e.back(e.wordStart(lo), r.maxLen), e.ahead(e.wordEnd(hi), r.maxLen)
		}
	case spanLine:
		lo, hi = e.lineStart(start, r.newlines), e.lineEnd(end, r.newlines)
	default:
		lo = e.lineStart(max(end-max(r.maxLen, farBack), 0), 0)
		hi = e.lineEnd(min(start+max(r.maxLen, farAhead), len(e.text)), 0)
	}
	return lo, hi
}

// back returns the offset n characters before i, or 0.
func (e *edges) back(i, n int) int {
	if e.ascii {
		return max(i-n, 0)
	}
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(e.text[:i])
		i -= size
	}
	return i
}

// ahead returns the offset n characters after i, or the end of the text.
func (e *edges) ahead(i, n int) int {
	if e.ascii {
		return min(i+n, len(e.text))
	}
	for ; n > 0 && i < len(e.text); n-- {
		_, size := utf8.DecodeRuneInString(e.text[i:])
		i += size
	}
	return i
}

// wordEnd returns the smallest j >= i where the text ends or has ASCII
// whitespace.
func (e *edges) wordEnd(i int) int {
	if e.endFrom <= i && i <= e.endTo {
		return e.endTo
	}
	j := i
	for j < len(e.text) && !isSpace(e.text[j]) {
		if j == e.endFrom {
			e.endFrom = i
			return e.endTo
		}
		j++
	}
	e.endFrom, e.endTo = i, j
	return j
}

// wordStart returns the largest j <= i where the text starts or follows
// ASCII whitespace.
func (e *edges) wordStart(i int) int {
	if e.startTo <= i && i <= e.startFrom {
		return e.startTo
	}
	j := i
	for j > 0 && !isSpace(e.text[j-1]) {
		if j == e.startFrom {
			e.startFrom = i
			return e.startTo
		}
		j--
	}
	e.startTo, e.startFrom = j, i
	return j
}

func isSpace(c byte) bool { return strings.IndexByte(asciiSpace, c) >= 0 }

func (e *edges) newlineOffsets() []int {
	if !e.newlinesFound {
		e.newlinesFound = true
		for i := 0; ; {
			j := strings.IndexByte(e.text[i:], '\n')
			if j < 0 {
				break
			}
			e.newlines = append(e.newlines, i+j)
			i += j + 1
		}
	}
	return e.newlines
}

// lineStart returns the start of the line holding offset i, moved back by
// more whole lines.
func (e *edges) lineStart(i, more int) int {
	nl := e.newlineOffsets()
	// k is the number of newlines before i.
	k, _ := slices.BinarySearch(nl, i)
	if k -= 1 + more; k < 0 {
		return 0
	}
	return nl[k] + 1
}

// lineEnd returns the end of the line holding offset i (the offset of its
// newline, or the end of the text), moved on by more whole lines.
func (e *edges) lineEnd(i, more int) int {
	nl := e.newlineOffsets()
	k, _ := slices.BinarySearch(nl, i)
	if k += more; k >= len(nl) {
		return len(e.text)
	}
	return nl[k]
}

// isASCII reports whether s has no byte above 0x7F.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
