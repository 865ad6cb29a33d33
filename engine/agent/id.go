package agent

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"
)

var idRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// NewID returns a fresh session ID such as "20261130-9f3a1c7e": the day
// and 32 random bits. Create draws again when the ID is taken.
func NewID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102") + "-" + hex.EncodeToString(b[:])
}

// newID is the ID generator Create uses (tests replace it).
var newID = NewID

// maxIDDraws bounds how often Create draws a generated ID that is taken.
const maxIDDraws = 16

// ValidID reports whether id can name a session: 1–64 letters, digits,
// dots, dashes or underscores, starting with a letter or digit.
func ValidID(id string) error {
	if !idRe.MatchString(id) {
		return fmt.Errorf("%q is not a valid session ID; use up to 64 letters, digits, '.', '-' or '_'", id)
	}
	return nil
}
