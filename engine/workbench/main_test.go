package workbench

import (
	"testing"

	"github.com/tally-dev/tally/internal/sandbox"
)

// The test binary doubles as the sandbox helper, as the tally binary does.
func TestMain(m *testing.M) { sandbox.RunTests(m) }
