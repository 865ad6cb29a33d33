package llmtest

import (
	"unicode"
	"unicode/utf8"
)

// maxWordBytes bounds the length of one word token, so long identifiers
// count as several tokens the way sub-word tokenizers split them.
const maxWordBytes = 6

// Tokenize splits s into tokens with a cheap deterministic scheme that is
// close enough to a BPE tokenizer for cache and budget tests: each run of
// letters, digits and underscores becomes one token per started 6 bytes
// (a single space before a word joins it, as in BPE vocabularies), each
// other run of whitespace is one token, and every other character is its own
// token. Concatenating the tokens gives back s exactly, and appending text
// to s changes at most the last of its tokens.
func Tokenize(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isWord(r):
			j := i + size
			for j < len(s) && j-i < maxWordBytes {
				r2, n := utf8.DecodeRuneInString(s[j:])
				if !isWord(r2) || j+n-i > maxWordBytes {
					break
				}
				j += n
			}
			out = append(out, s[i:j])
			i = j
		case r == ' ' && i+1 < len(s) && startsWord(s[i+1:]):
			// Like BPE vocabularies, a single space joins the word after it.
			j := i + 1
			for j < len(s) && j-i < maxWordBytes+1 {
				r2, n := utf8.DecodeRuneInString(s[j:])
				if !isWord(r2) || j+n-i > maxWordBytes+1 {
					break
				}
				j += n
			}
			out = append(out, s[i:j])
			i = j
		case unicode.IsSpace(r):
			j := i + size
			for j < len(s) {
				r2, n := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsSpace(r2) {
					break
				}
				j += n
			}
			out = append(out, s[i:j])
			i = j
		default:
			out = append(out, s[i:i+size])
			i += size
		}
	}
	return out
}

// CountTokens returns len(Tokenize(s)).
func CountTokens(s string) int { return len(Tokenize(s)) }

func startsWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWord(r)
}

func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// commonPrefix returns the number of leading tokens a and b share.
func commonPrefix(a, b []string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// floorUnit rounds n down to a multiple of unit.
func floorUnit(n, unit int) int {
	if unit <= 1 {
		return n
	}
	return n - n%unit
}

// promptCache simulates a provider's prefix cache for one model. Besides
// the prompts it keeps an index from the hash of every prompt's first k ×
// indexBlock tokens to the prompts that start so, so a lookup costs about
// the prompt's length instead of that times the number of prompts seen.
type promptCache struct {
	seen  [][]string       // rendered prompt tokens of earlier accepted requests
	index map[uint64][]int // prefix hash → indexes into seen
	last  []string         // tokens of the most recent accepted request
	any   bool             // whether last is set
}

// indexBlock is the token length of the prefixes promptCache indexes.
const indexBlock = 64

// prefixHashes returns the FNV-1a hashes of toks' first indexBlock,
// 2×indexBlock, … tokens.
func prefixHashes(toks []string) []uint64 {
	out := make([]uint64, 0, len(toks)/indexBlock)
	h := uint64(14695981039346656037)
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			h = (h ^ uint64(t[j])) * 1099511628211
		}
		h = (h ^ 0xff) * 1099511628211 // a token boundary
		if (i+1)%indexBlock == 0 {
			out = append(out, h)
		}
	}
	return out
}

// lookup returns the cached prefix length (before rounding) of toks: the
// longest prefix it shares with any prompt seen.
func (c *promptCache) lookup(toks []string) int {
	hs := prefixHashes(toks)
	k := 0
	for k < len(hs) && len(c.index[hs[k]]) > 0 {
		k++
	}
	if k == 0 {
		return c.scan(toks, c.all(), 0)
	}
	cands := c.index[hs[k-1]]
	from := k * indexBlock
	if commonPrefix(toks[:from], c.seen[cands[0]]) != from {
		return c.scan(toks, c.all(), 0) // a hash collision: compare everything
	}
	return c.scan(toks, cands, from)
}

// scan returns the longest common prefix of toks with the prompts cands,
// all of which share toks' first from tokens.
func (c *promptCache) scan(toks []string, cands []int, from int) int {
	best := from
	for _, i := range cands {
		if n := from + commonPrefix(toks[from:], c.seen[i][min(from, len(c.seen[i])):]); n > best {
			best = n
			if best == len(toks) {
				break
			}
		}
	}
	return best
}

func (c *promptCache) all() []int {
	out := make([]int, len(c.seen))
	for i := range out {
		out[i] = i
	}
	return out
}

func (c *promptCache) add(toks []string) {
	if c.index == nil {
		c.index = map[uint64][]int{}
	}
	for _, h := range prefixHashes(toks) {
		c.index[h] = append(c.index[h], len(c.seen))
	}
	c.seen = append(c.seen, toks)
	c.last = toks
	c.any = true
}
