package chat

import (
	"fmt"
	"strings"
)

// Effort is how much the model is asked to think before it answers. It is
// a request parameter, never prompt text: changing it leaves every byte of
// the messages and tools alone, so the provider's prefix cache still
// serves them. The empty Effort sends nothing and leaves the provider's
// default.
type Effort string

// The effort levels, from none to the most the provider offers.
const (
	EffortDefault Effort = ""
	EffortOff     Effort = "off"
	EffortLow     Effort = "low"
	EffortMedium  Effort = "medium"
	EffortHigh    Effort = "high"
	EffortMax     Effort = "max"
)

// EffortLevels lists the levels in order, the default first.
var EffortLevels = []Effort{EffortDefault, EffortOff, EffortLow, EffortMedium, EffortHigh, EffortMax}

// ParseEffort reads a level by name ("default" and "" are EffortDefault);
// any other word is an error saying which ones there are.
func ParseEffort(s string) (Effort, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "default" {
		return EffortDefault, nil
	}
	for _, e := range EffortLevels {
		if string(e) == s {
			return e, nil
		}
	}
	return "", fmt.Errorf("%q is not an effort level; use off, low, medium, high, max or default", s)
}

// String names the level for people: "default" for the empty level.
func (e Effort) String() string {
	if e == EffortDefault {
		return "default"
	}
	return string(e)
}
