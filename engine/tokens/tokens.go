// Package tokens counts tokens offline and keeps the usage anchor that turns
// the provider's billed prompt size into the engine's one source of truth for
// "how full is the context".
//
// Counting uses tiktoken's o200k_base encoding loaded from BPE ranks embedded
// in the binary, so it never touches the network. Counts are estimates of the
// provider's own tokenizer; the anchor corrects them after every response.
//
// Count's cost is linear in the length of its input, whatever the input:
// the BPE merge is quadratic in the length of one pre-tokenized piece, so a
// run of more than maxRun bytes of one character class (a megabyte of "a",
// of one emoji, of spaces) is cut into maxRun-byte pieces before it reaches
// the tokenizer. Ordinary prose, code and CJK text have no such runs and
// are counted exactly as tiktoken counts them; a cut run may be counted a
// token or so differently per cut than whole, which is well within what
// the usage anchor corrects.
package tokens

import (
	"iter"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the tiktoken encoding used for every estimate.
const Encoding = "o200k_base"

// MessageOverhead is the per-message framing cost (role markers and
// separators) that chat templates add around each message's content.
const MessageOverhead = 4

// chunkSize bounds the text handed to the tokenizer's regexp in one call so a
// pathological input (a megabyte without a newline) costs linear time.
const chunkSize = 8 << 10

// maxRun is the longest run of one character class (see classAt) handed to
// the tokenizer whole. The BPE merge costs O(n²) in the length n of one
// pre-tokenized piece, and a piece never spans two classes, so cutting runs
// here bounds the merge to O(maxRun) per byte. 256 bytes is far longer than
// any word, identifier or CJK phrase between punctuation marks, so ordinary
// text is never cut; at 256 a megabyte of one repeated letter costs about a
// third of a second, less than a megabyte of prose.
const maxRun = 256

var (
	once    sync.Once
	enc     *tiktoken.Tiktoken
	initErr error
)

func encoder() *tiktoken.Tiktoken {
	once.Do(func() {
		tiktoken.SetBpeLoader(loader.NewOfflineLoader())
		enc, initErr = tiktoken.GetEncoding(Encoding)
	})
	return enc
}

// Count returns the number of tokens in s. It is safe for concurrent use. If
// the embedded encoding cannot be loaded (a broken build), it falls back to
// one token per four bytes rather than failing the caller.
func Count(s string) int {
	if s == "" {
		return 0
	}
	e := encoder()
	if e == nil {
		return (len(s) + 3) / 4
	}
	n := 0
	for part := range parts(s) {
		n += len(e.EncodeOrdinary(part))
	}
	return n
}

// parts splits s into the consecutive pieces handed to the tokenizer one at
// a time: at most chunkSize bytes, cut after the last newline when there is
// one (else at a rune boundary), and cut again where a run of one character
// class would pass maxRun bytes.
func parts(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for len(s) > 0 {
			part := s
			if len(part) > chunkSize {
				cut := strings.LastIndexByte(part[:chunkSize], '\n')
				if cut <= 0 {
					cut = chunkSize
					for cut > 0 && !utf8.RuneStart(part[cut]) {
						cut--
					}
					if cut == 0 {
						cut = chunkSize
					}
				} else {
					cut++
				}
				part = part[:cut]
			}
			if cut := runCut(part); cut > 0 {
				part = part[:cut]
			}
			if !yield(part) {
				return
			}
			s = s[len(part):]
		}
	}
}

// runCut returns the offset in s at which a run of one character class
// reaches maxRun bytes, or 0 when s has no such run. The offset is always a
// rune boundary.
func runCut(s string) int {
	start, cls := 0, -1
	for i := 0; i < len(s); {
		c, size := classAt(s, i)
		if c != cls {
			start, cls = i, c
		}
		if i+size-start > maxRun && i > start {
			return i
		}
		i += size
	}
	return 0
}

// Character classes that no pre-tokenized piece of o200k_base spans two of
// (apart from one leading character, which the cut only moves).
const (
	classLetter = iota // letters and marks
	classNumber
	classSpace
	classOther // punctuation, symbols, emoji, invalid bytes
)

// classAt returns the class of the rune at s[i] and its length in bytes.
func classAt(s string, i int) (int, int) {
	if b := s[i]; b < utf8.RuneSelf {
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z':
			return classLetter, 1
		case '0' <= b && b <= '9':
			return classNumber, 1
		case b == ' ', '\t' <= b && b <= '\r':
			return classSpace, 1
		}
		return classOther, 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.IsLetter(r), unicode.IsMark(r):
		return classLetter, size
	case unicode.IsNumber(r):
		return classNumber, size
	case unicode.IsSpace(r):
		return classSpace, size
	}
	return classOther, size
}

// Err reports why the embedded encoding failed to load, or nil.
func Err() error {
	encoder()
	return initErr
}

// Anchor is the usage anchor: the provider's billed prompt tokens for the
// last request is the intercept, and only what was appended since is
// estimated. The zero value is an invalid anchor that estimates everything.
// It is not safe for concurrent use.
type Anchor struct {
	valid  bool
	billed int // provider prompt_tokens of the anchored request
	at     int // number of log entries that request contained
	est    int // our own estimate of that request, to measure drift
}

// Set anchors the count: the request that contained the first logLen log
// entries was billed billed prompt tokens, and we had estimated estimated.
func (a *Anchor) Set(billed, logLen, estimated int) {
	*a = Anchor{valid: true, billed: billed, at: logLen, est: estimated}
}

// Invalidate drops the anchor; every rebuild calls it because the billed
// count no longer describes the log.
func (a *Anchor) Invalidate() { *a = Anchor{} }

// Valid reports whether the anchor holds a provider-billed intercept.
func (a *Anchor) Valid() bool { return a.valid }

// Estimate returns the context size given the per-entry token counts of the
// log, their running total, and the fixed cost of the prefix (system prompt
// and tools) and the scratch zone. It is exact at the anchor point and adds
// only the entries appended since, so its cost grows with new messages, not
// with the log. exact reports whether no estimated part was added.
func (a *Anchor) Estimate(entryTokens func(i int) int, logLen, logTotal, prefix, scratch int) (total int, exact bool) {
	if a.valid && a.at <= logLen {
		total = a.billed
		for i := a.at; i < logLen; i++ {
			total += entryTokens(i)
		}
		return total + scratch, a.at == logLen && scratch == 0
	}
	return prefix + logTotal + scratch, false
}

// Parts returns the anchor's stored values for persisting it.
func (a *Anchor) Parts() (billed, at, estimated int) { return a.billed, a.at, a.est }
