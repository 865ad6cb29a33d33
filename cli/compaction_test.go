package cli

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// maintenanceScript reads files each turn, writes a brief when a cycle
// ends, a summary when asked, and proposes one removal when purging.
func maintenanceScript() llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.Contains(last, "This cycle is ending"):
			return llmtest.Text("<carry_forward>Decided: calc.Add is wrong. Open: fix it.</carry_forward>")
		case strings.Contains(last, "Write a summary of the conversation") || strings.Contains(req.Messages[0].Content, "You summarise"):
			return llmtest.Text("Summary: calc/calc.go was read several times; Add subtracts.")
		case len(req.Tools) == 1 && req.Tools[0] == "purge_context":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "purge_context", Arguments: `{"op":"remove","msg":4}`}}}
		}
		if k := req.ToolResultsSinceHuman(); k < 3 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"calc/calc.go","offset":%d,"limit":150}`, 1+100*k)}}}
		}
		return llmtest.Text("Read it.")
	})
}

func TestPreviewCompactArchivePurge(t *testing.T) {
	srv := llmtest.New(maintenanceScript())
	defer srv.Close()
	data, ws := t.TempDir(), workspace(t)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	common := []string{"--data", data, "--base-url", srv.URL(), "--model", "qwen3-8b", "--session", "m", "--workspace", ws, "--yes"}
	run := func(args ...string) (string, string) {
		t.Helper()
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v exited %d: %s", args[:2], code, errOut)
		}
		return out, errOut
	}
	// A 16K window with compaction off: the session rolls into new cycles.
	for i := 0; i < 10; i++ {
		run(append([]string{"run", "--context-window", "16000", "--compaction", "off"}, append(common, fmt.Sprintf("Turn %d: read calc/calc.go.", i))...)...)
	}
	out, _ := run("archive", "--data", data, "m")
	if !strings.HasPrefix(out, "cycle 1\t") || !strings.Contains(out, "Decided: calc.Add is wrong") {
		t.Fatalf("archive list:\n%s", out)
	}
	out, _ = run("archive", "--data", data, "m", "1")
	if !strings.Contains(out, "Hand-off brief:") || !strings.Contains(out, "[c1:m0]") || !strings.Contains(out, "Turn 0") {
		t.Errorf("archive cycle 1:\n%.600s", out)
	}
	if _, errOut, code := runCLI(t, "archive", "--data", data, "m", "99"); code != 1 || !strings.Contains(errOut, "no archived cycle 99") {
		t.Errorf("missing cycle: exit %d, %q", code, errOut)
	}
	// Without --model, maintenance commands use the session's own model
	// (qwen3-8b, a 32K window), not the default one.
	t.Setenv("TALLY_MODEL", "")
	if out, _ := run("preview", "--data", data, "m"); !strings.Contains(out, "window 32,768") {
		t.Errorf("preview did not use the session's model:\n%.200s", out)
	}
	// Two more turns without cycles leave something to compact.
	for i := 0; i < 2; i++ {
		run(append([]string{"run", "--context-window", "16000", "--compaction", "off", "--cycle-at", "0"}, append(common, fmt.Sprintf("More %d: read calc/calc.go again.", i))...)...)
	}
	// Preview is a dry run; compact applies it.
	before := len(srv.Requests())
	out, _ = run("preview", "--data", data, "--context-window", "16000", "m")
	for _, want := range []string{"Compaction preview", "1. intake", "2. micro", "3. prune", "4. memory", "5. summary", "6. emergency", "Pinned"} {
		if !strings.Contains(out, want) {
			t.Errorf("preview lacks %q:\n%s", want, out)
		}
	}
	// The counts line: what the compaction keeps, summarises, leaves
	// recallable and loses.
	if !regexp.MustCompile(`(?m)^Messages: kept verbatim [1-9]\d* · summarised \d+ · dropped but recallable \d+ · gone \d+$`).MatchString(out) {
		t.Errorf("preview lacks the counts line:\n%s", out)
	}
	if len(srv.Requests()) != before {
		t.Error("preview called the model")
	}
	out, _ = run("compact", "--data", data, "--context-window", "16000", "--base-url", srv.URL(), "m")
	if !strings.HasPrefix(out, "compacted m: ") {
		t.Errorf("compact printed %q", out)
	}
	// Purge: the model proposes, --yes applies.
	out, _ = run("purge", "--data", data, "--base-url", srv.URL(), "--yes", "m")
	if !strings.Contains(out, "Applied:") {
		t.Errorf("purge printed:\n%s\nlist:\n%s", out, srv.Requests()[len(srv.Requests())-1].Messages[1].Content)
	}
	if bad := srv.Invalid(); len(bad) > 0 {
		t.Fatalf("server rejected a request: %s", bad[0].Error)
	}
	// The whole history, all cycles, still exports.
	out, _ = run("export", "--data", data, "m")
	if !strings.Contains(out, `"cycle":1`) || !strings.Contains(out, `"cycle":2`) {
		t.Error("export lacks the archived cycles")
	}
	// What compaction and purge removed is still exported, marked.
	if !strings.Contains(out, `"superseded_by":"manual compaction"`) || !strings.Contains(out, `"superseded_by":"purge"`) {
		t.Errorf("export lacks the superseded messages:\n%.300s", out)
	}
}
