package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/secrets"
)

// Redacting arguments keeps valid JSON valid, keeps every byte outside the
// strings that held a secret, and finds secrets behind JSON escapes.
func TestRedactArgsKeepsJSONAndOtherBytes(t *testing.T) {
	in := `{ "path" : "x.txt",  "content":"password = \"` + modelPass + `\"\nGH=` + modelPAT + `", "n": 12345678901234567890 }`
	out, n := redactArgs(in)
	if !json.Valid([]byte(out)) || n != 2 {
		t.Fatalf("redactArgs = %s (%d)", out, n)
	}
	if strings.Contains(out, modelPass) || strings.Contains(out, modelPAT) {
		t.Errorf("a secret survived: %s", out)
	}
	if !strings.HasPrefix(out, `{ "path" : "x.txt",  "content":"password = \"[redacted: `) || !strings.HasSuffix(out, `", "n": 12345678901234567890 }`) {
		t.Errorf("bytes outside the secret's string changed: %s", out)
	}
	clean := `{"command":"go test ./...","timeout":30}`
	if out, n := redactArgs(clean); out != clean || n != 0 {
		t.Errorf("clean arguments changed: %s", out)
	}
	if out, _ := redactArgs(`{"command":"echo ` + modelPAT); strings.Contains(out, modelPAT) {
		t.Errorf("malformed arguments kept the secret: %s", out)
	}
}

// The streamed text, pieced together, is the redacted reply, however the
// pieces cut the secret, and no piece shows a secret.
func TestStreamRedactorNeverShowsASecret(t *testing.T) {
	reply := "Use this:\nAuthorization: Bearer " + modelBearer + "\nand " + modelPAT + " then " + strings.Repeat("word ", 80) + modelAWS + " end"
	want, _ := secrets.Redact(reply)
	for _, size := range []int{1, 3, 7, 64, len(reply)} {
		var r streamRedactor
		var shown strings.Builder
		for i := 0; i < len(reply); i += size {
			shown.WriteString(r.push(reply[i:min(i+size, len(reply))]))
		}
		shown.WriteString(r.flush())
		if shown.String() != want {
			t.Errorf("size %d: shown\n%q\nwant\n%q", size, shown.String(), want)
		}
	}
}
