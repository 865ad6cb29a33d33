package ui

import (
	"os"
	"testing"

	"github.com/tally-dev/tally/internal/sandbox"
)

// TestMain lets this test binary serve as the run_shell sandbox helper, as
// the tally binary does, so commands in these tests run sandboxed exactly
// as they do for users.
func TestMain(m *testing.M) {
	sandbox.RunHelperIfRequested()
	os.Exit(m.Run())
}
