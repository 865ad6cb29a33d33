// Package tokens counts tokens offline and keeps the usage anchor that turns
// the provider's billed prompt size into the engine's one source of truth for
// "how full is the context".
//
// Counting uses tiktoken's o200k_base encoding loaded from BPE ranks embedded
// in the binary, so it never touches the network. Counts are estimates of the
// provider's own tokenizer; the anchor corrects them after every response.
package tokens

import (
	"strings"
	"sync"
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
		n += len(e.EncodeOrdinary(part))
		s = s[len(part):]
	}
	return n
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
