package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/secrets/secretstest"
)

// A workspace AGENTS.md that includes the repository's secret files put
// them, raw, into the system prompt of the first request, with no tool
// call and no approval. Includes pass the read_file guards now.
func TestAgentsMDIncludeOfDotEnvIsRefused(t *testing.T) {
	fake := secretstest.New(18)
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".env"), "OPENAI_API_KEY=DOTENV-RAW-VALUE\n")
	write(t, filepath.Join(ws, "id_rsa"), "ID-RSA-RAW\n"+fake.PEM)
	write(t, filepath.Join(ws, "deploy", "prod.pem"), "PEM-FILE-RAW")
	write(t, filepath.Join(ws, "config.yaml"), "github_token: "+fake.GitHubPAT+"\naws_key: "+fake.AWSKeyID+"\nmode: fast\n")
	write(t, filepath.Join(ws, ".git", "config"), "[remote \"origin\"]\n\turl = https://GIT-CONFIG-RAW@example.test/x.git\n")
	write(t, filepath.Join(ws, "AGENTS.md"), strings.Join([]string{
		"rules first",
		"@.env", "@id_rsa", "@deploy/prod.pem", "@./deploy/../.env",
		"@" + filepath.Join(ws, ".env"),
		"@config.yaml", "@.git/config",
		"own token " + fake.OpenAIKey,
	}, "\n"))
	pack := LoadContext(ws, "")
	in := pack.Instructions
	for _, leak := range []string{"DOTENV-RAW-VALUE", "ID-RSA-RAW", "PEM-FILE-RAW", "GIT-CONFIG-RAW", fake.GitHubPAT, fake.AWSKeyID, fake.OpenAIKey, "BEGIN RSA PRIVATE KEY"} {
		if strings.Contains(in, leak) {
			t.Errorf("the system prompt holds the secret %q:\n%s", leak, in)
		}
	}
	for _, note := range []string{
		"[include @.env refused: on the secret-file deny list]",
		"[include @id_rsa refused: on the secret-file deny list]",
		"[include @deploy/prod.pem refused: on the secret-file deny list]",
		"[include @./deploy/../.env refused: on the secret-file deny list]",
		"[include @.git/config refused: inside the .git folder]",
	} {
		if !strings.Contains(in, note) {
			t.Errorf("no note %q in:\n%s", note, in)
		}
	}
	if !strings.Contains(in, "mode: fast") || !strings.Contains(in, "rules first") {
		t.Errorf("the harmless parts of the files are missing:\n%s", in)
	}
	if pack.Redacted < 3 || len(pack.Refused) != 6 {
		t.Errorf("redacted %d, refused %v; want at least 3 and 6", pack.Redacted, pack.Refused)
	}
}

// The configured deny list is the one applied, and a folder link does not
// hide a denied file behind an innocent path.
func TestAgentsMDIncludeUsesTheConfiguredDenyList(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "notes", "vault.txt"), "VAULT-RAW")
	write(t, filepath.Join(ws, "keys", "id_ed25519"), "KEY-RAW")
	if err := os.Symlink("keys", filepath.Join(ws, "docs")); err != nil {
		t.Skipf("cannot make a symlink here: %v", err)
	}
	write(t, filepath.Join(ws, "AGENTS.md"), "@notes/vault.txt\n@docs/id_ed25519\n")
	in := LoadContextWith(ws, ContextOptions{SecretFiles: []string{"vault.txt", "id_ed25519"}}).Instructions
	if strings.Contains(in, "VAULT-RAW") || strings.Contains(in, "KEY-RAW") {
		t.Errorf("a file on the configured deny list was included:\n%s", in)
	}
	if !strings.Contains(in, "[include @docs/id_ed25519 refused: on the secret-file deny list]") {
		t.Errorf("the include through a folder link is not refused:\n%s", in)
	}
	// An empty list denies nothing, like the file tools'.
	if in := LoadContextWith(ws, ContextOptions{SecretFiles: []string{}}).Instructions; !strings.Contains(in, "VAULT-RAW") {
		t.Errorf("an empty deny list still refused an include:\n%s", in)
	}
}

// A secret straddling the per-file cut is replaced whole, not cut into a
// prefix no rule recognises.
func TestSecretAtTheIncludeCutIsRedacted(t *testing.T) {
	fake := secretstest.New(19)
	ws := t.TempDir()
	pad := strings.Repeat("x", MaxContextFileBytes-10) + "\n"
	write(t, filepath.Join(ws, "big.md"), pad+fake.GitHubPAT+"\n")
	write(t, filepath.Join(ws, "AGENTS.md"), "@big.md")
	in := LoadContext(ws, "").Instructions
	if strings.Contains(in, fake.GitHubPAT[:12]) {
		t.Errorf("a prefix of the secret at the cut survived: %q", in[len(in)-120:])
	}
}
