package widget

import "fmt"

// RunPhase is what the open session is doing.
type RunPhase int

// The phases of a session, as the footer names them.
const (
	RunIdle            RunPhase = iota // nothing runs
	RunRunning                         // a turn runs; Step, MaxSteps and Tool say where
	RunWaitingApproval                 // a call waits for the user's decision
	RunWaitingAnswer                   // the compaction question waits for the user
	RunBusy                            // a maintenance job runs; Note says which
	RunStopping                        // Stop was pressed; the turn is winding down
	RunStopped                         // the user stopped the last turn or job
	RunFailed                          // the last turn or job failed
)

// RunState is the footer's turn state: a phase and where in it.
type RunState struct {
	Phase    RunPhase
	Step     int    // the model request running, from 1 (RunRunning)
	MaxSteps int    // the per-turn step limit (RunRunning)
	Tool     string // the tool running, if any (RunRunning)
	Detail   string // what a slow tool call does, shown instead of Tool (RunRunning)
	Note     string // the job's description (RunBusy)
}

// Running returns the state of a turn at step (0 when not known) running
// tool ("" when none).
func Running(step, maxSteps int, tool string) RunState {
	return RunState{Phase: RunRunning, Step: step, MaxSteps: maxSteps, Tool: tool}
}

// Busy returns the state of a maintenance job described by note.
func Busy(note string) RunState { return RunState{Phase: RunBusy, Note: note} }

// String renders the state for the footer, such as "running step 7/50 ·
// grep" or "idle".
func (r RunState) String() string {
	switch r.Phase {
	case RunRunning:
		s := "running"
		if r.Step > 0 {
			s = fmt.Sprintf("running step %d/%d", r.Step, r.MaxSteps)
		}
		switch {
		case r.Detail != "":
			s += " · " + r.Detail
		case r.Tool != "":
			s += " · " + r.Tool
		}
		return s
	case RunWaitingApproval:
		return "waiting for your approval"
	case RunWaitingAnswer:
		return "waiting for your answer: compact now?"
	case RunBusy:
		return r.Note
	case RunStopping:
		return "stopping…"
	case RunStopped:
		return "stopped"
	case RunFailed:
		return "failed"
	default:
		return "idle"
	}
}

// Ended reports whether the state is the outcome of a finished turn that
// the footer keeps showing (stopped or failed).
func (r RunState) Ended() bool { return r.Phase == RunStopped || r.Phase == RunFailed }
