package ui

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// A tool call that takes a while says in the footer what it is doing —
// the command run_shell runs, the checks that follow an edit of a Go file
// — and for how long, instead of only the tool's name.

// slowStepAfter is how long a call runs before the footer explains it.
var slowStepAfter = 2 * time.Second

// slowWatch is the footer's watch over the tool call running.
type slowWatch struct {
	gen int // bumps on each call; an older watch's ticks stop
}

// runningTool shows in the footer that call runs at step (0 when not
// known) and, once it has run for slowStepAfter, what it does.
func (u *UI) runningTool(live *liveSession, step int, call transcript.ToolCall) {
	u.footer.State.Run = tw.Running(step, maxSteps, call.Name)
	u.footer.Update()
	u.slow.gen++
	gen, start := u.slow.gen, time.Now()
	var tick func()
	tick = func() {
		run := u.footer.State.Run
		if gen != u.slow.gen || u.live != live || !live.job.running || run.Phase != tw.RunRunning || run.Tool != call.Name {
			return
		}
		u.footer.State.Run.Detail = fmt.Sprintf("%s (%d s)", slowStepText(call), int(time.Since(start).Seconds()))
		u.footer.Update()
		u.bridge.After(time.Second, tick)
	}
	u.bridge.After(slowStepAfter, tick)
}

// slowStepText says what a call that takes a while is doing, from its
// name and arguments.
func slowStepText(call transcript.ToolCall) string {
	var args struct {
		Path    string `json:"path"`
		Command string `json:"command"`
	}
	_ = json.Unmarshal([]byte(call.Arguments), &args)
	switch {
	case call.Name == "run_shell" && args.Command != "":
		return "running " + text.OneLine(args.Command, 60)
	case (call.Name == "edit_file" || call.Name == "write_file") && strings.HasSuffix(args.Path, ".go"):
		// The engine checks a written Go file with its default rules.
		return "checking the edit of " + path.Base(args.Path) + " (gofmt, go vet)…"
	case call.Name == "edit_file" || call.Name == "write_file":
		return "writing " + text.OneLine(args.Path, 60) + "…"
	case call.Name == "task":
		return "waiting for the sub-agent…"
	case strings.HasPrefix(call.Name, "mcp__"):
		server, _, _ := strings.Cut(strings.TrimPrefix(call.Name, "mcp__"), "__")
		return "waiting for the MCP server " + server + "…"
	case args.Path != "":
		return call.Name + " " + text.OneLine(args.Path, 60) + " still running…"
	}
	return call.Name + " still running…"
}
