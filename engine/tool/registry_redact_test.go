package tool

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/secrets/secretstest"
)

// TestRegistryRunRedactsSecrets checks that a file's secrets never reach
// the Result: a planted .env read with the user's allowance, and an
// ordinary file, each holding an AWS key pair, GitHub tokens, OpenAI-style
// keys and a PEM private key.
func TestRegistryRunRedactsSecrets(t *testing.T) {
	const alnum = secretstest.Alnum
	randomChars := secretstest.Chars
	awsID := "AKIA" + randomChars(1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	awsSecret := randomChars(2, alnum+"+/", 40)
	ghp := "ghp_" + randomChars(3, alnum, 36)
	ghFine := "github_pat_" + randomChars(4, alnum+"_", 82)
	skPlain := "sk-" + randomChars(5, alnum, 48)
	skProj := "sk-proj-" + randomChars(6, alnum, 74) + "T3BlbkFJ" + randomChars(7, alnum, 74)
	pemBody := randomChars(8, alnum+"+/", 64) + "\n" + randomChars(9, alnum+"+/", 64) + "\n"
	pem := "-----BEGIN PRIVATE KEY-----\n" + pemBody + "-----END PRIVATE KEY-----\n"
	secrets := []string{awsID, awsSecret, ghp, ghFine, skPlain, skProj, pemBody[:64]}

	dotenv := "AWS_ACCESS_KEY_ID=" + awsID + "\nAWS_SECRET_ACCESS_KEY=" + awsSecret + "\n" +
		"GITHUB_TOKEN=" + ghp + "\nGH_FINE=" + ghFine + "\nOPENAI_API_KEY=" + skProj + "\nLLM_KEY=" + skPlain + "\n" +
		"TLS_KEY=\"" + strings.ReplaceAll(strings.TrimSuffix(pem, "\n"), "\n", `\n`) + "\"\n"
	config := "# deploy settings\naws:\n  key_id: " + awsID + "\n  secret_access_key: " + awsSecret + "\n" +
		"github: {token: " + ghp + ", fine: " + ghFine + "}\nopenai: " + skPlain + " / " + skProj + "\n" + pem + "end\n"
	_, env := newWorkspace(t, map[string]string{".env": dotenv, "deploy/config.yml": config})

	reg := NewRegistry()
	for _, tool := range Builtins() {
		reg.AddBuiltin(tool)
	}
	allowed := WithSecretReadAllowed(context.Background())
	calls := []struct {
		name string
		ctx  context.Context
		tool string
		args string
	}{
		{".env allowed", allowed, "read_file", `{"path":".env"}`},
		{"ordinary file", context.Background(), "read_file", `{"path":"deploy/config.yml"}`},
		{"grep", context.Background(), "grep", `{"pattern":".","path":"deploy"}`},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			res := reg.Run(c.ctx, env, c.tool, c.args)
			if res.IsError {
				t.Fatalf("error: %s", res.Content)
			}
			for _, s := range secrets {
				if strings.Contains(res.Content, s) {
					t.Errorf("secret %.12s... survived:\n%s", s, res.Content)
				}
			}
			if res.Redacted < 7 {
				t.Errorf("Redacted = %d, want at least 7:\n%s", res.Redacted, res.Content)
			}
			for _, kind := range []string{"aws-access-token", "github-pat", "github-fine-grained-pat", "private-key"} {
				if !slices.Contains(res.RedactedKinds, kind) {
					t.Errorf("RedactedKinds %v lacks %s", res.RedactedKinds, kind)
				}
				if !strings.Contains(res.Content, "[redacted: "+kind+"]") {
					t.Errorf("Content lacks the %s marker", kind)
				}
			}
			if !slices.Contains(res.RedactedKinds, "openai-api-key") && !slices.Contains(res.RedactedKinds, "sk-api-key") {
				t.Errorf("RedactedKinds %v lacks an OpenAI-style key", res.RedactedKinds)
			}
		})
	}
	t.Run("secrets straddling a line cut", func(t *testing.T) {
		long := strings.Repeat("x", ReadFileMaxLineLen-40) + " token " + ghp + " " + strings.Repeat("y", 3000) + "\n"
		wide := strings.Repeat("z", GrepMaxLineLen-60) + " needle " + ghFine + "\n"
		_, env := newWorkspace(t, map[string]string{"long.txt": long, "wide.txt": wide})
		for _, c := range []struct{ tool, args, secret string }{
			{"read_file", `{"path":"long.txt"}`, ghp},
			{"grep", `{"pattern":"needle","path":"wide.txt"}`, ghFine},
		} {
			res := reg.Run(context.Background(), env, c.tool, c.args)
			if res.IsError || !strings.Contains(res.Content, "cut") && !strings.Contains(res.Content, "[...]") {
				t.Fatalf("%s: the line was not cut: %.300s", c.tool, res.Content)
			}
			if strings.Contains(res.Content, c.secret[:20]) || res.Redacted == 0 {
				t.Errorf("%s: part of a secret survived the cut (Redacted=%d):\n%s", c.tool, res.Redacted, res.Content[max(len(res.Content)-400, 0):])
			}
		}
	})
	t.Run("error results are redacted too", func(t *testing.T) {
		res := reg.Run(context.Background(), env, "read_file", `{"path": "`+ghp+`"`)
		if !res.IsError || strings.Contains(res.Content, ghp) || res.Redacted != 1 {
			t.Errorf("IsError=%v Redacted=%d: %s", res.IsError, res.Redacted, res.Content)
		}
		res = reg.Run(context.Background(), env, "read_file", `{"path": "`+ghp+`"}`)
		if !res.IsError || strings.Contains(res.Content, ghp) {
			t.Errorf("IsError=%v: %s", res.IsError, res.Content)
		}
	})
	t.Run("clean results are untouched", func(t *testing.T) {
		res := reg.Run(context.Background(), env, "list_dir", `{}`)
		if res.Redacted != 0 || res.RedactedKinds != nil || !strings.Contains(res.Content, "deploy/") {
			t.Errorf("Redacted=%d kinds=%v: %s", res.Redacted, res.RedactedKinds, res.Content)
		}
	})
}
