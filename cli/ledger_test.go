package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/workbench"
)

// `tally inspect --ledger` on a session that had sent nothing printed an
// empty table and `no price is known for model ""`: it says there are no
// requests yet, and a missing price names the model.
func TestLedgerOfAnEmptySessionSaysThereAreNoRequests(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("Hello.")))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	data, ws := t.TempDir(), workspace(t)
	wb, _, err := workbench.Open(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := wb.Config(workbench.SessionOptions{Flags: workbench.Flags{BaseURL: srv.URL(), Model: "house-model"}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := wb.OpenOrCreateSession(cfg, "empty", ws)
	if err != nil {
		t.Fatal(err)
	}
	sess.Close()
	wb.Close()

	out, errOut, code := runCLI(t, "inspect", "--ledger", "--data", data, "empty")
	if code != 0 || !strings.Contains(out, "No requests yet") || strings.Contains(out, `model ""`) || strings.Contains(out, "0 requests") {
		t.Errorf("the ledger of an empty session: exit %d, out %q, stderr %q", code, out, errOut)
	}
	out, _, code = runCLI(t, "inspect", "--ledger", "--json", "--data", data, "empty")
	var rep struct {
		Rows []json.RawMessage `json:"rows"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Rows == nil || len(rep.Rows) != 0 || !strings.Contains(out, `"rows": []`) {
		t.Errorf("the JSON ledger of an empty session: exit %d, %s", code, out)
	}

	// With requests, an unpriced model is named as such.
	if _, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "house-model", "--session", "empty", "--workspace", ws, "hello"); code != 0 {
		t.Fatalf("run exited %d: %s", code, errOut)
	}
	out, _, _ = runCLI(t, "inspect", "--ledger", "--data", data, "empty")
	mustHave(t, out, "1 request · ", "cost n/a: no price is known for the model house-model; set one")
}
