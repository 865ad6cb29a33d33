package demo

import (
	"testing"

	"github.com/tally-dev/tally/internal/sandbox"
)

func TestMain(m *testing.M) { sandbox.RunTests(m) }
