package cli

import (
	"errors"
	"testing"
)

func TestMessageDropsEnginePrefixes(t *testing.T) {
	for in, want := range map[string]string{
		"transcript: stored message is not valid JSON (x); the store may be damaged": "stored message is not valid JSON (x); the store may be damaged",
		"tally rewind: agent: workbench: the session is busy; wait":                  "tally rewind: the session is busy; wait",
		"tally run: cannot read the current folder (x);\npass --workspace":           "tally run: cannot read the current folder (x); pass --workspace",
		"the server said: storage: full; try later":                                  "the server said: storage: full; try later",
		"tally: unknown command \"x\"; run `tally help` to see the commands":         "tally: unknown command \"x\"; run `tally help` to see the commands",
	} {
		if got := message(errors.New(in)); got != want {
			t.Errorf("message(%q) = %q; want %q", in, got, want)
		}
	}
}
