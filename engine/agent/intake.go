package agent

import (
	"fmt"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/transcript"
)

// intakeCalls is step.IntakeCalls for the session's log: ids unique in
// the cycle, a replaced one named after the coming request.
func (t *turnLoop) intakeCalls(in []llm.ToolCall) ([]transcript.ToolCall, map[string]string, int) {
	s := t.s
	if len(in) == 0 {
		return nil, nil, 0
	}
	return step.IntakeCalls(in, step.IDsOf(s.log), fmt.Sprintf("call_%d", s.st.Requests+1))
}
