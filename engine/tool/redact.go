package tool

import (
	"slices"

	"github.com/tally-dev/tally/engine/secrets"
)

// secretSlack is how many bytes beyond a cut a tool keeps and scans for
// secrets before cutting a long line, so that a secret straddling the cut
// is replaced whole instead of leaving a prefix no rule recognises.
const secretSlack = 512

// redact returns text with its secrets replaced by markers (see
// [secrets.Redact]) and counts them in r.Redacted and r.RedactedKinds.
func (r *Result) redact(text string) string {
	out, findings := secrets.Redact(text)
	for _, f := range findings {
		r.Redacted += f.Count
		if !slices.Contains(r.RedactedKinds, f.Rule) {
			r.RedactedKinds = append(r.RedactedKinds, f.Rule)
		}
	}
	return out
}
