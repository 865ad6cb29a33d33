//go:build realmodel

package realmodel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tally-dev/tally/internal/realmodel"
)

// evalSteps is each task's step limit, and evalPredict the tokens one
// reply may have: SmolLM2 seldom makes a tool call, and a reply that runs
// on is cut where it stops being an answer, so the run stays within an
// hour on two shared cores.
const (
	evalSteps   = 3
	evalPredict = 128
)

// TestEval runs every task of realmodel.Tasks through tally run against
// SmolLM2, once with the defaults (the status block on change, the
// checklist) and once with the status block and the checklist off, and
// writes the table of pass rate, requests, tokens and evaluated tokens
// per arm. Nothing is asserted of the pass rate; a crash, a hang, a
// refused request or a session the wire disagrees with fails the test.
func TestEval(t *testing.T) {
	if short() {
		t.Skip("the evaluation is not part of the short form")
	}
	// The tools first in the system message: the 44 sessions, each in a
	// folder of its own, then share the tool list in llama-server's cache
	// instead of each evaluating it afresh.
	r := newRig(t, "eval", realmodel.ServerOptions{Template: env.template, TemplateKwargs: `{"tools_first": true}`, Predict: evalPredict})
	arms := []realmodel.Arm{
		{Name: "default"},
		{Name: "bare", Flags: []string{"--status-mode", "off", "--no-checklist"}},
	}
	var results []realmodel.TaskResult
	for _, arm := range arms {
		for _, task := range realmodel.Tasks() {
			res := realmodel.RunTask(context.Background(), r.tally, r.proxy, task, arm, r.root, evalSteps)
			verdict := "pass"
			if !res.Pass {
				verdict = "fail: " + res.Why
			}
			t.Logf("%s/%s: %s (%d requests, %d evaluated, %s)", arm.Name, task.Name, verdict, res.Requests, res.Evaluated, res.Duration.Round(1e6))
			for _, p := range res.Problems {
				t.Errorf("%s/%s: %s", arm.Name, task.Name, p)
			}
			results = append(results, res)
		}
	}
	var sums []realmodel.ArmSummary
	var names []string
	for _, a := range arms {
		sums = append(sums, realmodel.Summarize(a.Name, results))
		names = append(names, a.Name)
	}
	var b strings.Builder
	b.WriteString(realmodel.EvalTable(sums))
	b.WriteString("\n")
	b.WriteString(realmodel.TaskTable(results, names))
	fmt.Fprintf(&b, "\n%d tasks per arm, --max-steps %d, replies capped at %d tokens, SmolLM2-135M-Instruct Q4_1, temperature 0, seed 42.\n", len(realmodel.Tasks()), evalSteps, evalPredict)
	writeOut(t, "eval.md", b.String())
}
