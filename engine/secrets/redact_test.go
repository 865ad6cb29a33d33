package secrets

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/secrets/secretstest"
)

// fake returns n characters drawn from alphabet with a fixed seed, so the
// fake secrets are random-looking (high entropy) but stable.
var fake = secretstest.Chars

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	base64 = alnum + "+/"
)

// Fake credentials of the kinds Redact must catch.
var (
	awsKeyID     = "AKIA" + fake(1, upper, 16)
	awsSecret    = fake(2, base64, 40)
	githubPAT    = "ghp_" + fake(3, alnum, 36)
	githubFine   = "github_pat_" + fake(4, alnum+"_", 82)
	openAIProj   = "sk-proj-" + fake(5, alnum+"_-", 74) + "T3BlbkFJ" + fake(6, alnum+"_-", 74)
	openAIPlain  = "sk-" + fake(7, alnum, 48)
	openAILegacy = "sk-" + fake(8, alnum, 20) + "T3BlbkFJ" + fake(9, alnum, 20)
	pemBody      = pemLines(10, 12)
	pemBlock     = "-----BEGIN RSA PRIVATE KEY-----\n" + pemBody + "-----END RSA PRIVATE KEY-----"
)

func pemLines(seed uint64, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(fake(seed+uint64(i), base64, 64))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestRedactCatchesCommonSecrets(t *testing.T) {
	cases := []struct {
		name, text string
		secrets    []string
		rule       string
	}{
		{"aws key id in prose", "the key is " + awsKeyID + " for prod", []string{awsKeyID}, "aws-access-token"},
		{"aws key id in dotenv", "AWS_ACCESS_KEY_ID=" + awsKeyID + "\n", []string{awsKeyID}, "aws-access-token"},
		{"aws secret in dotenv", "AWS_SECRET_ACCESS_KEY=" + awsSecret + "\n", []string{awsSecret}, ""},
		{"aws pair in credentials file", "[default]\naws_access_key_id = " + awsKeyID + "\naws_secret_access_key = " + awsSecret + "\n", []string{awsKeyID, awsSecret}, "aws-access-token"},
		{"github pat", "remote: https://" + githubPAT + "@github.com/x/y", []string{githubPAT}, "github-pat"},
		{"github pat in dotenv", "GITHUB_TOKEN=" + githubPAT + "\n", []string{githubPAT}, "github-pat"},
		{"github fine-grained pat", "token: " + githubFine + "\n", []string{githubFine}, "github-fine-grained-pat"},
		{"github fine-grained pat in dotenv", "GH_TOKEN=" + githubFine, []string{githubFine}, "github-fine-grained-pat"},
		{"openai project key", "key = '" + openAIProj + "'", []string{openAIProj}, "openai-api-key"},
		{"openai project key in dotenv", "OPENAI_API_KEY=" + openAIProj + "\n", []string{openAIProj}, "openai-api-key"},
		{"openai legacy key", "export OPENAI_API_KEY=\"" + openAILegacy + "\"", []string{openAILegacy}, "openai-api-key"},
		{"plain sk- key", "use " + openAIPlain + " to call the API", []string{openAIPlain}, "sk-api-key"},
		{"plain sk- key in dotenv", "LLM_KEY=" + openAIPlain + "\n", []string{openAIPlain}, "sk-api-key"},
		{"plain sk- key in json", `{"api_key": "` + openAIPlain + `"}`, []string{openAIPlain}, "sk-api-key"},
		{"pem private key", "here:\n" + pemBlock + "\nthere", []string{pemBody[:64], "PRIVATE KEY"}, "private-key"},
		{"pem private key without its end", "key:\n" + pemBlock[:len(pemBlock)/2], []string{pemBody[:64]}, "private-key"},
		{"pem private key without its start", pemBlock[len(pemBlock)/2:] + "\nmore", []string{pemBody[len(pemBody)-65 : len(pemBody)-1]}, "private-key"},
		{"pem private key cut into numbered lines", numbered(pemBlock[:len(pemBlock)*2/3]), []string{pemBody[65 : 65+64]}, "private-key"},
		{"pem private key in dotenv", "PRIVATE_KEY=\"" + strings.ReplaceAll(pemBlock, "\n", `\n`) + "\"\n", []string{pemBody[:64]}, "private-key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, findings := Redact(tc.text)
			for _, s := range tc.secrets {
				if strings.Contains(out, s) {
					t.Errorf("secret %q survived:\n%s", s, out)
				}
			}
			if len(findings) == 0 {
				t.Fatalf("no findings for %q", tc.text)
			}
			if tc.rule != "" {
				if !strings.Contains(out, Marker(tc.rule)) {
					t.Errorf("output lacks %s:\n%s", Marker(tc.rule), out)
				}
				if !hasRule(findings, tc.rule) {
					t.Errorf("findings %v lack %s", findings, tc.rule)
				}
			}
		})
	}
}

// numbered prefixes each line with a line number and a tab, as read_file
// shows files.
func numbered(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = fmt.Sprintf("%6d\t%s", i+1, l)
	}
	return strings.Join(lines, "\n")
}

func hasRule(fs []Finding, rule string) bool {
	for _, f := range fs {
		if f.Rule == rule && f.Count > 0 {
			return true
		}
	}
	return false
}

func TestRedactKeepsSurroundingText(t *testing.T) {
	in := "before GITHUB_TOKEN=" + githubPAT + " after\nnext line"
	out, findings := Redact(in)
	want := "before GITHUB_TOKEN=" + Marker("github-pat") + " after\nnext line"
	if out != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
	if len(findings) != 1 || findings[0] != (Finding{Rule: "github-pat", Count: 1}) {
		t.Errorf("findings = %v", findings)
	}
}

func TestRedactCountsEachSecret(t *testing.T) {
	other := "ghp_" + fake(33, alnum, 36)
	in := githubPAT + "\n" + other + "\n" + githubPAT + "\n"
	out, findings := Redact(in)
	if strings.Contains(out, "ghp_") {
		t.Errorf("a token survived:\n%s", out)
	}
	if len(findings) != 1 || findings[0].Count != 3 {
		t.Errorf("findings = %v, want 3 github-pat", findings)
	}
}

func TestRedactLeavesOrdinaryTextAlone(t *testing.T) {
	texts := []string{
		"",
		"package main\n\nfunc main() { println(\"hello\") }\n",
		"the API key goes in OPENAI_API_KEY; see docs/setup.md",
		"token := os.Getenv(\"GITHUB_TOKEN\")\napiKey := cfg.APIKey\n",
		"pip install sk-learn-extra-tools-for-machine-learning-models\n",
		"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n", // AWS's documented example
		"password = ${DB_PASSWORD}\n",
		"Redacted earlier: " + Marker("github-pat") + " and " + Marker("generic-api-key"),
		"if strings.HasPrefix(s, \"-----BEGIN RSA PRIVATE KEY-----\") {\n\treturn parse(s)\n}\n",
		"-----END RSA PRIVATE KEY-----\n",
	}
	for _, in := range texts {
		out, findings := Redact(in)
		if out != in || findings != nil {
			t.Errorf("Redact(%q) = %q, %v; want it unchanged", in, out, findings)
		}
	}
}

func TestRedactIsIdempotent(t *testing.T) {
	in := "AWS_ACCESS_KEY_ID=" + awsKeyID + "\nAWS_SECRET_ACCESS_KEY=" + awsSecret + "\nGH=" + githubFine + "\n" + pemBlock
	once, _ := Redact(in)
	twice, findings := Redact(once)
	if twice != once || findings != nil {
		t.Errorf("second pass changed the text or found %v:\n%s\n---\n%s", findings, once, twice)
	}
}

// TestRedactFarFromKeyword checks that a secret deep inside a long text is
// found even though the scan only looks near keywords.
func TestRedactFarFromKeyword(t *testing.T) {
	filler := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit\n", 5000)
	in := filler + "x := \"" + githubPAT + "\"\n" + filler + pemBlock + "\n" + filler + awsKeyID
	out, findings := Redact(in)
	for _, s := range []string{githubPAT, pemBody[:64], awsKeyID} {
		if strings.Contains(out, s) {
			t.Errorf("secret %q survived in a long text", s)
		}
	}
	if len(findings) != 3 {
		t.Errorf("findings = %v, want 3 kinds", findings)
	}
}

func TestRulesLoad(t *testing.T) {
	active, skipped := Stats()
	if active < 200 {
		t.Errorf("only %d rules are active; skipped: %v", active, skipped)
	}
	// Only path-bound and path-only rules may be left out.
	for _, s := range skipped {
		if !strings.Contains(s, "path") {
			t.Errorf("unexpectedly skipped: %s", s)
		}
	}
	t.Logf("%d active rules, %d skipped: %v", active, len(skipped), skipped)
}

func TestBuildRuleSetSkipsBrokenRules(t *testing.T) {
	rs := buildRuleSet(`
[[rules]]
id = "bad"
regex = '''(?<=x)y'''
keywords = ["y"]

[[rules]]
id = "good"
regex = '''zz-[0-9]{6}'''
keywords = ["zz-"]
`, "this is not toml [[")
	if len(rs.rules) != 1 || rs.rules[0].id != "good" {
		t.Errorf("rules = %v", rs.rules)
	}
	if len(rs.skipped) != 2 {
		t.Errorf("skipped = %v, want the bad rule and the bad file", rs.skipped)
	}
}

// corpus returns about n bytes of real source code and text from the Go
// tree, which is full of rule keywords such as key, token, api and auth.
func corpus(tb testing.TB, n int) string {
	tb.Helper()
	var b strings.Builder
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("no Go tree to take text from: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src", "net", "http")
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || b.Len() >= n {
			return nil
		}
		data, rerr := os.ReadFile(p)
		if rerr == nil {
			b.Write(data)
		}
		return nil
	})
	if err != nil || b.Len() < n {
		tb.Skipf("not enough corpus text under %s", root)
	}
	return b.String()[:n]
}

func BenchmarkRedact1MB(b *testing.B) {
	base := corpus(b, 1<<20)
	// Plant a few secrets so the replacement path is measured too.
	text := base[:1<<19] + "\nGITHUB_TOKEN=" + githubPAT + "\n" + base[1<<19:] + "\n" + pemBlock
	b.Run("code", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			Redact(text)
		}
	})
	plain := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit\n", (1<<20)/56)
	b.Run("no-keywords", func(b *testing.B) {
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			Redact(plain)
		}
	})
	// The worst cases: a keyword on every line, and one long line of
	// keywords without whitespace.
	dense := strings.Repeat("api_token = os.Getenv(\"TOKEN\") // the auth key\n", (1<<20)/48)
	b.Run("dense", func(b *testing.B) {
		b.SetBytes(int64(len(dense)))
		for b.Loop() {
			Redact(dense)
		}
	})
	blob := strings.Repeat("key.s.ey"+fake(40, base64, 56), (1<<20)/64)
	b.Run("one-line", func(b *testing.B) {
		b.SetBytes(int64(len(blob)))
		for b.Loop() {
			Redact(blob)
		}
	})
}

// reference is Redact without windows: like gitleaks, every rule whose
// keyword occurs anywhere runs on the whole text.
func reference(text string) (string, []Finding) {
	rs := rules()
	low := lowerASCII(text)
	var spans []span
	for _, r := range rs.rules {
		run := len(r.keywords) == 0
		for _, k := range r.keywords {
			run = run || strings.Contains(low, k)
		}
		if run {
			spans = rs.match(r, text, 0, len(text), spans)
		}
	}
	if len(spans) == 0 {
		return text, nil
	}
	return replace(text, spans)
}

// TestRedactWindowsMatchFullScan checks that scanning only near keywords
// finds what scanning everything finds, with secrets planted at random
// places in code, in long lines, next to non-ASCII text and at the edges.
func TestRedactWindowsMatchFullScan(t *testing.T) {
	base := corpus(t, 256<<10)
	secrets := []string{
		"GITHUB_TOKEN=" + githubPAT,
		"aws_secret_access_key = " + awsSecret,
		"x := \"" + awsKeyID + "\"",
		"key: " + openAIPlain,
		pemBlock,
		"Authorization: Bearer " + githubFine,
		"password=\"" + fake(41, alnum, 24) + "\"",
		"curl -u admin:" + fake(42, alnum, 16) + " https://example.com",
		"ключ «" + openAIProj + "» 🔑 api_key=" + fake(43, alnum, 32),
		strings.Repeat("x", 5000) + "token=" + fake(44, base64, 3000) + strings.Repeat("y", 5000),
	}
	r := rand.New(rand.NewPCG(7, 7))
	for round := range 20 {
		text := base[r.IntN(len(base)/2):]
		text = text[:r.IntN(len(text))]
		for range 1 + r.IntN(6) {
			i := r.IntN(len(text) + 1)
			text = text[:i] + secrets[r.IntN(len(secrets))] + text[i:]
		}
		if round%5 == 0 {
			text = secrets[round%len(secrets)] + text + secrets[(round+3)%len(secrets)]
		}
		got, gotF := Redact(text)
		want, wantF := reference(text)
		if got != want {
			t.Fatalf("round %d: windowed scan differs from full scan: %v vs %v", round, gotF, wantF)
		}
	}
}

func ExampleRedact() {
	out, findings := Redact("GITHUB_TOKEN=ghp_Z7q2LmX9vR4tB8nK1wE5yH3cJ6pS0dF2gA4u\n")
	fmt.Print(out)
	fmt.Println(findings)
	// Output:
	// GITHUB_TOKEN=[redacted: github-pat]
	// [{github-pat 1}]
}
