package secrets

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/secrets/secretstest"
)

// Fake credentials a model writes in these tests.
var (
	modelPAT    = "ghp_" + secretstest.Chars(71, alnum, 36)
	modelAWS    = "AKIA" + secretstest.Chars(72, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	modelPass   = `p@$$w0rd!#%&x`
	modelBearer = secretstest.Chars(73, alnum, 32)
)

// Redacting arguments keeps valid JSON valid, keeps every byte outside the
// strings that held a secret, and finds secrets behind JSON escapes.
func TestJSONStringsKeepsJSONAndOtherBytes(t *testing.T) {
	in := `{ "path" : "x.txt",  "content":"password = \"` + modelPass + `\"\nGH=` + modelPAT + `", "n": 12345678901234567890 }`
	out, n := JSONStrings(in)
	if !json.Valid([]byte(out)) || n != 2 {
		t.Fatalf("JSONStrings = %s (%d)", out, n)
	}
	if strings.Contains(out, modelPass) || strings.Contains(out, modelPAT) {
		t.Errorf("a secret survived: %s", out)
	}
	if !strings.HasPrefix(out, `{ "path" : "x.txt",  "content":"password = \"[redacted: `) || !strings.HasSuffix(out, `", "n": 12345678901234567890 }`) {
		t.Errorf("bytes outside the secret's string changed: %s", out)
	}
	clean := `{"command":"go test ./...","timeout":30}`
	if out, n := JSONStrings(clean); out != clean || n != 0 {
		t.Errorf("clean arguments changed: %s", out)
	}
	if out, _ := JSONStrings(`{"command":"echo ` + modelPAT); strings.Contains(out, modelPAT) {
		t.Errorf("malformed arguments kept the secret: %s", out)
	}
}

// The streamed text, pieced together, is the redacted reply, however the
// pieces cut the secret, and no piece shows a secret.
func TestStreamNeverShowsASecret(t *testing.T) {
	reply := "Use this:\nAuthorization: Bearer " + modelBearer + "\nand " + modelPAT + " then " + strings.Repeat("word ", 80) + modelAWS + " end"
	want, _ := Redact(reply)
	for _, size := range []int{1, 3, 7, 64, len(reply)} {
		var r Stream
		var shown strings.Builder
		for i := 0; i < len(reply); i += size {
			shown.WriteString(r.Push(reply[i:min(i+size, len(reply))]))
		}
		shown.WriteString(r.Flush())
		if shown.String() != want {
			t.Errorf("size %d: shown\n%q\nwant\n%q", size, shown.String(), want)
		}
	}
}

// The streamed reply was redacted again from its first byte at every
// piece, so a long answer cost quadratic time; redaction now restarts from
// a cut a lookback back, and a PEM key far into a long reply still never
// shows.
func TestStreamIsLinearAndStillCatchesAPEMKey(t *testing.T) {
	key := secretstest.New(7).PEM
	reply := strings.Repeat("The eviction order follows the access list. ", 600) + "\n" +
		strings.Repeat("line of prose\n", 200) + key + "done " + strings.Repeat("x ", 3000)
	want, _ := Redact(reply)
	if strings.Contains(want, "PRIVATE KEY-----\n"+key[len("-----BEGIN RSA PRIVATE KEY-----\n"):][:20]) {
		t.Fatal("the rules themselves miss the key")
	}
	for _, size := range []int{2, 5, 40} {
		var r Stream
		var shown strings.Builder
		redactions := 0
		for i := 0; i < len(reply); i += size {
			before := len(r.cuts)
			shown.WriteString(r.Push(reply[i:min(i+size, len(reply))]))
			if len(r.cuts) != before {
				redactions++
			}
			if len(r.cuts) > streamLookback+2 {
				t.Fatalf("size %d: %d cuts kept", size, len(r.cuts))
			}
		}
		shown.WriteString(r.Flush())
		if shown.String() != want {
			body := strings.Split(key, "\n")[1]
			t.Errorf("size %d: the shown text is not the redacted reply (key body shown: %v, len %d vs %d)", size, strings.Contains(shown.String(), body), len(shown.String()), len(want))
		}
		if limit := len(reply)/streamMinShow + strings.Count(reply, "\n") + 2; redactions > limit {
			t.Errorf("size %d: %d redactions for a %d-byte reply; want at most %d", size, redactions, len(reply), limit)
		}
	}
}
