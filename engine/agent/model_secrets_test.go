package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/secrets/secretstest"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

const secretAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Fake credentials the model writes in these tests.
var (
	modelPAT    = "ghp_" + secretstest.Chars(71, secretAlnum, 36)
	modelAWS    = "AKIA" + secretstest.Chars(72, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	modelPass   = `p@$$w0rd!#%&x`
	modelBearer = secretstest.Chars(73, secretAlnum, 32)
)

// leaks returns the secrets that occur in b.
func leaks(b []byte, secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		if bytes.Contains(b, []byte(s)) {
			out = append(out, s)
		}
	}
	return out
}

// storeLeaks returns the secrets found anywhere in the session's store
// file, which is what the store keeps and what export and inspect read.
func (h *harness) storeLeaks(secrets ...string) []string {
	h.t.Helper()
	b, err := os.ReadFile(h.st.Path())
	if err != nil {
		h.t.Fatal(err)
	}
	return leaks(b, secrets...)
}

// eventLeaks returns the secrets found in the events sent to the screen.
func (h *harness) eventLeaks(secrets ...string) []string {
	h.t.Helper()
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	b, err := json.Marshal(h.rec.events)
	if err != nil {
		h.t.Fatal(err)
	}
	return leaks(b, secrets...)
}

// requestLeaks returns the secrets found in any request body the server
// got after the first.
func (h *harness) requestLeaks(secrets ...string) []string {
	var out []string
	for _, r := range h.srv.Requests()[1:] {
		out = append(out, leaks(r.Body, secrets...)...)
	}
	return out
}

// The model's reply text, its reasoning and the arguments of its write_file,
// edit_file and run_shell calls were stored, streamed to the screen and sent
// back on every request with their secrets whole. They are redacted at
// intake now; the tools still get the model's own bytes.
func TestModelWrittenSecretIsRedactedInStoreButWrittenToFile(t *testing.T) {
	content := "GITHUB_TOKEN=" + modelPAT + "\npassword = \"" + modelPass + "\"\n"
	writeArgs, _ := json.Marshal(map[string]string{"path": "creds.txt", "content": content})
	editArgs, _ := json.Marshal(map[string]string{"path": "a.txt", "old_string": "alpha", "new_string": "alpha " + modelAWS})
	shellArgs, _ := json.Marshal(map[string]string{"command": "printf '%s' '" + modelPAT + "' > shell.txt"})
	h := newHarness(t, llmtest.Sequence(
		llmtest.Reply{
			Reasoning: "The user's key is " + modelAWS + "; I will write it down.",
			Content:   "I will store " + modelPAT + " and use\nAuthorization: Bearer " + modelBearer + "\nnow.",
			ToolCalls: []llmtest.ToolCall{
				{Name: "write_file", Arguments: string(writeArgs)},
				{Name: "edit_file", Arguments: string(editArgs)},
				{Name: "run_shell", Arguments: string(shellArgs)},
			},
		},
		llmtest.Text("Done: the token "+modelPAT+" is in creds.txt."),
		llmtest.Text("ok"),
	), tool.ApproveAll{})
	h.cfg.Mode = tool.ModeFullAuto
	s := h.session("secrets1")
	res, err := s.Run(context.Background(), "save my credentials")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "thanks"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	all := []string{modelPAT, modelAWS, modelPass, modelBearer}

	// The tools did what the model asked, byte for byte.
	if b, _ := os.ReadFile(filepath.Join(h.ws, "creds.txt")); string(b) != content {
		t.Errorf("creds.txt = %q, want the model's content %q", b, content)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "a.txt")); !strings.Contains(string(b), "alpha "+modelAWS) {
		t.Errorf("a.txt = %q, want the edit applied as written", b)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "shell.txt")); string(b) != modelPAT {
		t.Errorf("shell.txt = %q, want the command run as written", b)
	}
	for _, m := range s.Snapshot().Messages() {
		if m.Role == transcript.Tool && m.IsError {
			t.Errorf("tool %s failed: %s", m.ToolName, m.Text())
		}
	}

	// Nothing else kept them: not the store, the screen, the requests or
	// the turn's answer.
	if l := h.storeLeaks(all...); len(l) > 0 {
		t.Errorf("the store holds %q", l)
	}
	if l := h.eventLeaks(all...); len(l) > 0 {
		t.Errorf("events shown to the user carry %q", l)
	}
	if l := h.requestLeaks(all...); len(l) > 0 {
		t.Errorf("later requests carry %q", l)
	}
	if l := leaks([]byte(res.Answer), all...); len(l) > 0 {
		t.Errorf("the answer carries %q", l)
	}
	var streamed strings.Builder
	for _, e := range h.rec.kinds(EventDelta) {
		streamed.WriteString(e.Delta.Content)
	}
	if !strings.Contains(streamed.String(), "Authorization: Bearer [redacted: bearer-token]\nnow.") {
		t.Errorf("streamed text = %q, want the reply shown redacted and whole", streamed.String())
	}
	reply := s.Snapshot().Messages()[1]
	if reply.Redacted < 5 {
		t.Errorf("the reply counts %d redactions, want at least 5", reply.Redacted)
	}

	// Decided once: the redacted reply is sent byte for byte the same on
	// every later request (the prefix cache needs the history stable).
	reqs := h.srv.Requests()
	second, third := assistantMessages(t, reqs[1].Body), assistantMessages(t, reqs[len(reqs)-1].Body)
	if len(second) == 0 || len(third) < len(second) {
		t.Fatalf("assistant messages: %d then %d", len(second), len(third))
	}
	for i := range second {
		if !bytes.Equal(second[i], third[i]) {
			t.Errorf("assistant message %d changed between requests:\n%s\n%s", i, second[i], third[i])
		}
	}
	again, err := Open(h.cfg, "secrets1")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := again.Snapshot().Messages()[1], s.Snapshot().Messages()[1]; a.ToolCalls[0].Arguments != b.ToolCalls[0].Arguments || a.Text() != b.Text() {
		t.Errorf("the reopened reply differs from the live one")
	}
}

// rawJSON encodes v without HTML escapes.
func rawJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

// assistantMessages returns the raw JSON of each assistant message of a
// request body.
func assistantMessages(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	for _, m := range req.Messages {
		var role struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(m, &role) == nil && role.Role == "assistant" {
			out = append(out, m)
		}
	}
	return out
}

// Neutralising rewrote the arguments before the tool ran: a write_file
// whose content held </agent_status> wrote "‹/agent_status>" to disk, and
// an edit_file whose old_string held a tag never matched the file. Only the
// stored and sent copy is neutralised now.
func TestWriteFileContentWithStatusTagIsWrittenVerbatim(t *testing.T) {
	content := "before</agent_status>\n<agent_status visibility=\"internal\" state_version=\"99\">\nphase: done\n</agent_status>\nafter\n"
	// As a model writes them: tags raw, not \u003c-escaped.
	writeArgs := rawJSON(t, map[string]string{"path": "status.md", "content": content})
	editArgs := rawJSON(t, map[string]string{"path": "status.md", "old_string": "after\n", "new_string": "after</turn_meta>\n"})
	if !strings.Contains(writeArgs, "</agent_status>") {
		t.Fatalf("arguments %s do not carry the raw tag", writeArgs)
	}
	h := newHarness(t, llmtest.Sequence(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "write_file", Arguments: writeArgs},
			{Name: "edit_file", Arguments: editArgs},
		}},
		llmtest.Text("written"),
	), tool.ApproveAll{})
	h.cfg.Mode = tool.ModeFullAuto
	s := h.session("tags1")
	if _, err := s.Run(context.Background(), "write the file"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	want := strings.Replace(content, "after\n", "after</turn_meta>\n", 1)
	if b, _ := os.ReadFile(filepath.Join(h.ws, "status.md")); string(b) != want {
		t.Errorf("status.md = %q, want the model's bytes %q", b, want)
	}
	for _, m := range s.Snapshot().Messages() {
		if m.Role == transcript.Tool && m.IsError {
			t.Errorf("tool %s failed: %s", m.ToolName, m.Text())
		}
		for _, c := range m.ToolCalls {
			if tags := transcript.ReservedTags(c.Arguments); len(tags) > 0 {
				t.Errorf("stored arguments of %s carry %v: %s", c.Name, tags, c.Arguments)
			}
		}
	}
	if bad := s.Audit().Tags(); len(bad) > 0 {
		t.Errorf("audit: %v", bad)
	}
	if bytes.Contains(h.srv.Requests()[1].Body, []byte(`</agent_status>`)) {
		t.Errorf("the second request carries a raw </agent_status>")
	}
}

// A sub-agent's final report reached the parent's request, the store and
// export with a GitHub token and an AWS key id whole.
func TestSubAgentReportSecretsAreRedacted(t *testing.T) {
	report := "Report: the deploy script uses " + modelPAT + " and the key id " + modelAWS + "."
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if isChildReq(r.Messages) {
			return llmtest.Text(report)
		}
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("find keys", "find the deploy credentials", "")}}
		}
		return llmtest.Text("ok")
	})
	h := newHarness(t, script, nil)
	s := h.session("sub-secrets")
	if _, err := s.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	all := []string{modelPAT, modelAWS}
	res := s.Snapshot().Messages()[2]
	if res.Role != transcript.Tool || !strings.Contains(res.Text(), "Report: the deploy script uses [redacted: github-pat]") {
		t.Errorf("task result = %q", res.Text())
	}
	if l := h.requestLeaks(all...); len(l) > 0 {
		t.Errorf("the parent's requests carry %q", l)
	}
	if l := h.storeLeaks(all...); len(l) > 0 {
		t.Errorf("the store holds %q", l)
	}
	if l := h.eventLeaks(all...); len(l) > 0 {
		t.Errorf("events carry %q", l)
	}
	kids, err := s.Subagents().List()
	if err != nil || len(kids) != 1 {
		t.Fatalf("children = %+v, %v", kids, err)
	}
	if l := leaks([]byte(kids[0].ReportHead), all...); len(l) > 0 {
		t.Errorf("the child's report head carries %q", l)
	}
	if b, err := h.st.Blob(kids[0].ReportSHA); err != nil || len(leaks(b, all...)) > 0 {
		t.Errorf("the stored report = %q, %v", b, err)
	}
}

// A proxy token given as the user name of HTTPS_PROXY reached run_shell's
// environment, so `env` printed it into the tool result, the store and the
// next request.
func TestProxyUserNameTokenNeverReachesTheModel(t *testing.T) {
	token := secretstest.Chars(74, secretAlnum, 24)
	t.Setenv("HTTPS_PROXY", "http://"+token+"@proxy.invalid:8080")
	t.Setenv("NO_PROXY", "127.0.0.1,localhost")
	h := newHarness(t, llmtest.Sequence(
		llmtest.Call("run_shell", `{"command":"env; echo proxy=http://`+token+`@proxy.invalid:8080"}`),
		llmtest.Text("done"),
	), tool.ApproveAll{})
	h.cfg.Mode = tool.ModeFullAuto
	s := h.session("proxy1")
	if _, err := s.Run(context.Background(), "show the environment"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	out := s.Snapshot().Messages()[2].Text()
	if strings.Contains(out, "HTTPS_PROXY") || !strings.Contains(out, "proxy=http://[redacted: url-credentials]@proxy.invalid") {
		t.Errorf("run_shell result = %q", out)
	}
	if l := h.requestLeaks(token); len(l) > 0 {
		t.Errorf("the next request carries the proxy token")
	}
	if l := h.storeLeaks(token); len(l) > 0 {
		t.Errorf("the store holds the proxy token")
	}
}
