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

// promptCache simulates a provider's prefix cache for one model.
type promptCache struct {
	seen [][]string // rendered prompt tokens of earlier accepted requests
	last []string   // tokens of the most recent accepted request
	any  bool       // whether last is set
}

// lookup returns the cached prefix length (before rounding) of toks.
func (c *promptCache) lookup(toks []string) int {
	best := 0
	for _, s := range c.seen {
		if n := commonPrefix(toks, s); n > best {
			best = n
			if best == len(toks) {
				break
			}
		}
	}
	return best
}

func (c *promptCache) add(toks []string) {
	c.seen = append(c.seen, toks)
	c.last = toks
	c.any = true
}
