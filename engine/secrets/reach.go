package secrets

import (
	"regexp/syntax"
	"strings"
)

// How far from a keyword occurrence a rule's match may reach, which decides
// the window of text its regex runs on. Every rule's match contains one of
// its keywords (gitleaks derives the keywords from the regex), so the match
// lies within maxLen characters of the occurrence, except for parts repeated
// without bound:
//
//   - spanWord: unbounded parts never match ASCII whitespace, so each is
//     within one run of non-space bytes: widening the window to the next
//     whitespace and then by maxLen characters, once per unbounded part, on each
//     side, covers every match;
//   - spanLine: unbounded parts never match a newline, so the match spans no
//     more newlines than its bounded parts hold, and the lines that many
//     lines around the occurrence cover it;
//   - spanFar: unbounded parts may cross lines; the window is farBack bytes
//     before and farAhead bytes after the occurrence, widened to whole
//     lines, which is a bound chosen for the rules at hand (PEM blocks), not
//     a guarantee.
const (
	spanWord = iota
	spanLine
	spanFar
)

// Window bounds of spanFar rules, in bytes, on each side of the keyword:
// they cover the longest secrets that span lines, such as PEM private keys,
// whose keyword may be at either end.
const (
	farBack  = 32 << 10
	farAhead = 32 << 10
)

// reach is what [analyze] finds out about a regex.
type reach struct {
	span     int
	maxLen   int // characters of the bounded parts
	newlines int // newlines the bounded parts may hold
	runs     int // unbounded repeats
}

// analyze works out the reach of a regex.
func analyze(expr string) reach {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return reach{span: spanFar}
	}
	var r reach
	r.maxLen, r.newlines = walkReach(re.Simplify(), &r)
	return r
}

// walkReach returns the characters and newlines re may match, counting
// unbounded repeats as nothing but recording in r what they may contain.
func walkReach(re *syntax.Regexp, r *reach) (chars, newlines int) {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune), strings.Count(string(re.Rune), "\n")
	case syntax.OpCharClass:
		return 1, boolInt(classHas(re.Rune, "\n"))
	case syntax.OpAnyCharNotNL:
		return 1, 0
	case syntax.OpAnyChar:
		return 1, 1
	case syntax.OpCapture:
		return walkReach(re.Sub[0], r)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			b, n := walkReach(s, r)
			chars, newlines = chars+b, newlines+n
		}
		return chars, newlines
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			b, n := walkReach(s, r)
			chars, newlines = max(chars, b), max(newlines, n)
		}
		return chars, newlines
	case syntax.OpQuest:
		return walkReach(re.Sub[0], r)
	case syntax.OpStar, syntax.OpPlus:
		unbounded(re.Sub[0], r)
		return 0, 0
	case syntax.OpRepeat:
		if re.Max < 0 {
			unbounded(re.Sub[0], r)
			return 0, 0
		}
		b, n := walkReach(re.Sub[0], r)
		return b * re.Max, n * re.Max
	default:
		// Empty matches and assertions take no text.
		return 0, 0
	}
}

// unbounded records in r what an unboundedly repeated sub may match.
func unbounded(sub *syntax.Regexp, r *reach) {
	r.runs++
	var probe reach
	_, nl := walkReach(sub, &probe)
	span := spanWord
	switch {
	case nl > 0 || probe.span == spanFar:
		span = spanFar
	case matchesSpace(sub) || probe.span == spanLine:
		span = spanLine
	}
	r.span = max(r.span, span, probe.span)
	r.runs += probe.runs
}

// matchesSpace reports whether re may match an ASCII whitespace byte.
func matchesSpace(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return strings.ContainsAny(string(re.Rune), asciiSpace)
	case syntax.OpCharClass:
		return classHas(re.Rune, asciiSpace)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	}
	for _, s := range re.Sub {
		if matchesSpace(s) {
			return true
		}
	}
	return false
}

const asciiSpace = " \t\n\v\f\r"

// classHas reports whether the character class (pairs of bounds) contains
// any of the runes in set.
func classHas(class []rune, set string) bool {
	for _, c := range set {
		for i := 0; i+1 < len(class); i += 2 {
			if class[i] <= c && c <= class[i+1] {
				return true
			}
		}
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
