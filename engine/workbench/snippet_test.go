package workbench

import (
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
)

// A hit's snippet leaves out the engine's blocks, whole or cut at either
// end of the text, and keeps what the person wrote.
func TestSnippetsLeaveOutEngineBlocks(t *testing.T) {
	if got := stripEngineBlocks("…(none yet) </turn_meta> please fix it <agent_status>phase: x"); got != "please fix it" {
		t.Errorf("a cut block left %q", got)
	}
	m := transcript.UserText("<turn_meta>\ndate: 2026-01-01\nmodel: m\nworking_set: calc/calc.go\n</turn_meta>", "please fix the Calculator bug", time.Now())
	if !strings.Contains(m.Text(), "</turn_meta>") {
		t.Fatalf("the message does not carry its header: %q", m.Text())
	}
	got := hitSnippet(m, "calculator")
	if strings.Contains(got, "turn_meta") || strings.Contains(got, "working_set") || !strings.Contains(got, "please fix the Calculator bug") {
		t.Errorf("snippet %q", got)
	}
}
