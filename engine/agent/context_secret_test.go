package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/secrets/secretstest"
	"github.com/tally-dev/tally/engine/tool"
)

// The includes of a workspace AGENTS.md reached the first request's system
// prompt, the store and `tally inspect` raw, in read-only mode and with no
// tool call. They go through the deny list and redaction now, with the
// deny list the host configured.
func TestAgentsMDIncludeOfDotEnvNeverReachesRequestOrStore(t *testing.T) {
	fake := secretstest.New(20)
	h := newHarness(t, llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Text("ok") }), nil)
	h.cfg.Mode = tool.ModeReadOnly
	h.cfg.Shell.SecretFiles = append(tool.DefaultSecretFiles(), "vault.txt")
	files := map[string]string{
		".env":        "DB_PASSWORD=DOTENV-RAW\n",
		"id_rsa":      fake.PEM,
		"vault.txt":   "VAULT-RAW",
		"config.yaml": "token: " + fake.GitHubPAT + "\n",
		"AGENTS.md":   "@.env\n@id_rsa\n@vault.txt\n@config.yaml\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(h.ws, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := h.session("include-secrets")
	defer s.Close()
	if _, err := s.Run(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	h.noInvalid()
	reqs := h.srv.Requests()
	if len(reqs) == 0 || len(reqs[0].Messages) == 0 {
		t.Fatal("no request was sent")
	}
	stored, err := Inspect(h.cfg, "include-secrets")
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"request": reqs[0].Messages[0].Content, "store": stored.st.System} {
		for _, leak := range []string{"DOTENV-RAW", "VAULT-RAW", "PRIVATE KEY", fake.GitHubPAT} {
			if strings.Contains(text, leak) {
				t.Errorf("the %s's system prompt holds %q", where, leak)
			}
		}
		if !strings.Contains(text, "[include @vault.txt refused: on the secret-file deny list]") {
			t.Errorf("the %s's system prompt does not note the refused include:\n%s", where, text)
		}
	}
}
