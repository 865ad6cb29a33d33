package agent

import "math"

// level is the context level: exact at the last anchored request, plus
// our count of what was appended since; after a rebuild, our count of the
// whole request in the provider's units (see calibration).
func (s *Session) level() (int, bool) {
	if !s.anchor.Valid() && s.st.Calibration != nil {
		return s.st.Calibration.estimate(s.prefixTok + s.log.Tokens()), false
	}
	return s.anchor.Estimate(func(i int) int { return s.log.At(i).Tokens }, s.log.Len(), s.log.Tokens(), s.prefixTok, 0)
}

// calibration is how the provider's count of the last anchored request
// stood to ours when a rebuild dropped the anchor: Billed against our
// estimate Est, and the measured ratio of their growth. Until the next
// reply anchors the level again, the level is estimated in the
// provider's units from it (see Session.level), so a compaction's result
// is told in the units its preview promised — also on servers whose usage
// leaves out part of the prefix, such as the tool schemas.
type calibration struct {
	Billed int     `json:"billed"`
	Est    int     `json:"est"`
	Ratio  float64 `json:"ratio"`
}

// estimate is our count own in the provider's units.
func (c *calibration) estimate(own int) int {
	if c == nil {
		return own
	}
	ratio := c.Ratio
	if ratio <= 0 {
		ratio = 1
	}
	return max(c.Billed+int(math.Round(float64(own-c.Est)*ratio)), 0)
}
