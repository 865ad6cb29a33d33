package secrets

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Finding counts the secrets one rule found in a text.
type Finding struct {
	// Rule is the id of the rule that found the secrets, such as
	// "github-pat" or "private-key"; it is the kind shown in the marker.
	Rule string
	// Count is how many secrets of that kind were replaced.
	Count int
}

// Marker returns the text that replaces a secret found by rule.
func Marker(rule string) string { return "[redacted: " + rule + "]" }

// span is one secret to replace: text[start:end], found by rule.
type span struct {
	start, end int
	rule       *rule
}

// Redact replaces every secret found in text with [Marker] of the rule that
// found it, keeping the surrounding text, and reports how many secrets of
// each kind it replaced, sorted by rule id. Overlapping findings are merged
// into one replacement, labelled with the most specific rule. When nothing
// is found, out is text itself and findings is nil.
func Redact(text string) (out string, findings []Finding) {
	rs := rules()
	if text == "" || len(rs.rules) == 0 {
		return text, nil
	}
	e := newEdges(text)
	// The text each rule's regex must see: the windows around the
	// occurrences of its keywords, merged.
	windows := make(map[int][][2]int)
	rs.index.scan(text, func(ri, start, end int) {
		w := windows[ri]
		lo, hi := e.window(rs.rules[ri].reach, start, end)
		if n := len(w); n > 0 && lo <= w[n-1][1] {
			w[n-1][0] = min(w[n-1][0], lo)
			w[n-1][1] = max(w[n-1][1], hi)
			return
		}
		windows[ri] = append(w, [2]int{lo, hi})
	})
	if len(windows) == 0 && len(rs.always) == 0 {
		return text, nil
	}
	var spans []span
	for _, ri := range rs.always {
		spans = rs.match(rs.rules[ri], text, 0, len(text), spans)
	}
	ids := make([]int, 0, len(windows))
	for ri := range windows {
		ids = append(ids, ri)
	}
	slices.Sort(ids)
	for _, ri := range ids {
		for _, w := range windows[ri] {
			spans = rs.match(rs.rules[ri], text, w[0], w[1], spans)
		}
	}
	if len(spans) == 0 {
		return text, nil
	}
	return replace(text, spans)
}

// match appends the secrets r finds in text[lo:hi] to spans.
func (rs *ruleSet) match(r *rule, text string, lo, hi int, spans []span) []span {
	part := text[lo:hi]
	for _, m := range r.re.FindAllStringSubmatchIndex(part, -1) {
		mStart, mEnd := m[0], m[1]
		// Like gitleaks, a match does not include surrounding newlines.
		for mStart < mEnd && part[mStart] == '\n' {
			mStart++
		}
		for mEnd > mStart && part[mEnd-1] == '\n' {
			mEnd--
		}
		if mStart == mEnd {
			continue
		}
		sStart, sEnd := mStart, mEnd
		if g := r.secretGroup; g > 0 {
			if m[2*g] < 0 || m[2*g] == m[2*g+1] {
				continue
			}
			sStart, sEnd = m[2*g], m[2*g+1]
		} else {
			for g := 1; 2*g+1 < len(m); g++ {
				if m[2*g] >= 0 && m[2*g] < m[2*g+1] {
					sStart, sEnd = m[2*g], m[2*g+1]
					break
				}
			}
		}
		secret := part[sStart:sEnd]
		if r.entropy != 0 && entropy(secret) <= r.entropy {
			continue
		}
		match := part[mStart:mEnd]
		line := lineAround(text, lo+mStart, lo+mEnd)
		if rs.allowed(r, secret, match, line) {
			continue
		}
		spans = append(spans, span{start: lo + sStart, end: lo + sEnd, rule: r})
	}
	return spans
}

// allowed reports whether a global or rule allowlist exempts a finding.
func (rs *ruleSet) allowed(r *rule, secret, match, line string) bool {
	for _, a := range rs.global {
		if a.allows(r.id, secret, match, line) {
			return true
		}
	}
	for _, a := range r.allow {
		if a.allows(r.id, secret, match, line) {
			return true
		}
	}
	return false
}

// lineAround returns the whole lines of text that [start, end) touches.
func lineAround(text string, start, end int) string {
	lo := strings.LastIndexByte(text[:start], '\n') + 1
	hi := len(text)
	if i := strings.IndexByte(text[end:], '\n'); i >= 0 {
		hi = end + i
	}
	return text[lo:hi]
}

// entropy is the Shannon entropy of s in bits per character, counted over
// runes as gitleaks does.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := make(map[rune]int, 64)
	for _, r := range s {
		counts[r]++
	}
	inv := 1 / float64(len(s))
	var e float64
	for _, n := range counts {
		f := float64(n) * inv
		e -= f * math.Log2(f)
	}
	return e
}

// replace writes text with every span replaced by its marker. Overlapping
// spans become one replacement, labelled with the first non-generic rule.
func replace(text string, spans []span) (string, []Finding) {
	slices.SortFunc(spans, func(a, b span) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(b.end, a.end)
	})
	merged := spans[:1]
	for _, s := range spans[1:] {
		cur := &merged[len(merged)-1]
		if s.start < cur.end {
			cur.end = max(cur.end, s.end)
			if cur.rule.generic && !s.rule.generic {
				cur.rule = s.rule
			}
			continue
		}
		merged = append(merged, s)
	}
	counts := map[string]int{}
	var b strings.Builder
	b.Grow(len(text))
	pos := 0
	for _, s := range merged {
		b.WriteString(text[pos:s.start])
		b.WriteString(Marker(s.rule.id))
		pos = s.end
		counts[s.rule.id]++
	}
	b.WriteString(text[pos:])
	findings := make([]Finding, 0, len(counts))
	for id, n := range counts {
		findings = append(findings, Finding{Rule: id, Count: n})
	}
	slices.SortFunc(findings, func(a, b Finding) int { return strings.Compare(a.Rule, b.Rule) })
	return b.String(), findings
}
