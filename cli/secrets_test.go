package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/secrets/secretstest"
)

// Secrets planted in a workspace and read by the model — with read_file,
// with grep, and with `cat` in the shell — never reach a request, the
// store file or `tally export`: they are redacted at intake, and the
// secret files themselves are refused to the file tools (--yes does not
// allow a secret-file read; only a person at the prompt can).
func TestPlantedSecretsReachNoRequestStoreOrExport(t *testing.T) {
	fake := secretstest.New(1)
	awsID, awsSecret, github, openai, pem := fake.AWSKeyID, fake.AWSSecret, fake.GitHubPAT, fake.OpenAIProj, fake.PEM
	secrets := fake.Values()

	ws := workspace(t)
	files := map[string]string{
		".env":            "AWS_ACCESS_KEY_ID=" + awsID + "\nAWS_SECRET_ACCESS_KEY=" + awsSecret + "\nOPENAI_API_KEY=" + openai + "\n",
		"notes/setup.md":  "# setup\nexport GITHUB_TOKEN=" + github + "\naws_secret_access_key = " + awsSecret + "\n",
		"deploy/id_rsa":   pem,
		"deploy/copy.txt": "the deploy key:\n" + pem,
	}
	for name, body := range files {
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("read_file", `{"path":".env"}`),
		llmtest.Call("read_file", `{"path":"notes/setup.md"}`),
		llmtest.Call("grep", `{"pattern":"BEGIN|TOKEN|KEY"}`),
		llmtest.Call("run_shell", `{"command":"cat .env; cat deploy/id_rsa; env"}`),
		llmtest.Call("read_file", `{"path":"deploy/copy.txt"}`),
		llmtest.Text("I looked at the configuration."),
	))
	defer srv.Close()
	data := t.TempDir()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("MY_SERVICE_TOKEN", github) // in Tally's own environment, never the commands'
	out, errOut, code := runCLI(t, "run", "--data", data, "--base-url", srv.URL(), "--model", "deepseek-chat",
		"--workspace", ws, "--session", "sec", "--yes", "look at the configuration")
	if code != 0 {
		t.Fatalf("tally run exited %d: %s", code, errOut)
	}
	if n := len(srv.Requests()); n != 6 {
		t.Fatalf("%d requests, want 6", n)
	}
	export, _, code := runCLI(t, "export", "--data", data, "sec")
	if code != 0 {
		t.Fatal("export failed")
	}
	store, err := os.ReadFile(filepath.Join(data, "tally.db"))
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range secrets {
		for i, r := range srv.Requests() {
			if strings.Contains(string(r.Body), s) {
				t.Errorf("the %s reached request %d", what, i+1)
			}
		}
		if strings.Contains(string(store), s) {
			t.Errorf("the %s is in the store file", what)
		}
		if strings.Contains(export, s) || strings.Contains(out, s) || strings.Contains(errOut, s) {
			t.Errorf("the %s is in the command output or the export", what)
		}
	}
	if strings.Count(export, "[redacted: ") < 5 {
		t.Errorf("the export shows fewer redactions than the secrets read:\n%s", export)
	}
	last := string(srv.Requests()[5].Body)
	for _, want := range []string{"secret-file deny list", "[redacted: "} {
		if !strings.Contains(last, want) {
			t.Errorf("the model was not told %q", want)
		}
	}
}
