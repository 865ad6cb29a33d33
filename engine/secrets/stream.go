package secrets

import "strings"

// streamLineHold is how long a streamed line may grow before its complete
// words are shown without waiting for its end.
const streamLineHold = 256

// Stream shows a streamed text redacted: it holds the text
// back to the end of a line (or, for a long line, to its last space), then
// shows the new part of the redacted text so far, so that a secret is never
// shown before the rules can see it whole. What it shows, flushed at the
// end, adds up to the redacted reply, which is what the session stores.
//
// Its cost stays linear in the reply: it redacts again only the text from
// a cut at least streamLookback bytes back (room for the longest secret a
// rule matches across lines, a PEM block), and within a line it shows at
// most every streamMinShow bytes.
type Stream struct {
	raw     strings.Builder
	shown   string // the redacted text shown so far
	rawDone int    // how much of raw shown covers
	// lineStart is where the last line of raw starts.
	lineStart int
	// cuts are earlier points where raw[:at] was shown as shown[:len]:
	// redaction restarts from the latest one streamLookback back.
	cuts []streamCut
}

// streamCut pairs a length of the raw text with the length of its
// redacted form shown.
type streamCut struct{ raw, shown int }

const (
	// streamLookback is how far back redaction starts again: more than
	// a 4096-bit RSA private key in PEM (about 3.2 KB).
	streamLookback = 6 << 10
	// streamMinShow is the fewest new bytes shown within a line.
	streamMinShow = 256
)

// Push adds a streamed piece and returns the text that may be shown now
// ("" while it is held back).
func (r *Stream) Push(piece string) string {
	if piece == "" {
		return ""
	}
	r.raw.WriteString(piece)
	raw := r.raw.String()
	if nl := strings.LastIndexByte(piece, '\n'); nl >= 0 {
		r.lineStart = len(raw) - len(piece) + nl + 1
	}
	cut := r.lineStart
	if len(raw)-cut > streamLineHold {
		from := max(cut, r.rawDone)
		if sp := strings.LastIndexAny(raw[from:], " \t"); sp >= 0 {
			cut = from + sp + 1
		}
	}
	cut = holdPEM(raw, r.rawDone, cut)
	if cut <= r.rawDone {
		return ""
	}
	if cut-r.rawDone < streamMinShow && !strings.Contains(raw[r.rawDone:cut], "\n") {
		return ""
	}
	return r.show(raw[:cut])
}

// holdPEM moves cut back to the start of a line that opens a PEM block
// ("-----BEGIN") in raw[done:cut] whose "-----END" line has not arrived
// whole: the rules redact the block only once they see all of it, and
// until then its lines must not be shown.
func holdPEM(raw string, done, cut int) int {
	if cut <= done {
		return cut
	}
	b := strings.Index(raw[done:cut], "-----BEGIN")
	if b < 0 {
		return cut
	}
	begin := done + b
	if e := strings.Index(raw[begin:], "-----END"); e >= 0 && strings.IndexByte(raw[begin+e:], '\n') >= 0 {
		return cut
	}
	return strings.LastIndexByte(raw[:begin], '\n') + 1
}

// Flush returns the rest of the text, redacted, at the end of the stream.
func (r *Stream) Flush() string {
	raw := r.raw.String()
	if len(raw) <= r.rawDone {
		return ""
	}
	return r.show(raw)
}

// show returns what redacting upto adds to the text already shown. When a
// later part changed how an earlier one is redacted (the end of a PEM
// block, say), the new part is redacted on its own instead.
func (r *Stream) show(upto string) string {
	base := streamCut{}
	for _, c := range r.cuts {
		if c.raw+streamLookback <= r.rawDone {
			base = c
		}
	}
	red, _ := Redact(upto[base.raw:])
	var out string
	if prev := r.shown[base.shown:]; strings.HasPrefix(red, prev) {
		out = red[len(prev):]
		r.shown = r.shown[:base.shown] + red
	} else {
		out, _ = Redact(upto[r.rawDone:])
		r.shown += out
	}
	r.rawDone = len(upto)
	r.cuts = append(r.cuts, streamCut{raw: r.rawDone, shown: len(r.shown)})
	// Keep only the cuts a later base can still be: the latest one past
	// the lookback and the ones after it.
	for len(r.cuts) > 1 && r.cuts[1].raw+streamLookback <= r.rawDone {
		r.cuts = r.cuts[1:]
	}
	return out
}
