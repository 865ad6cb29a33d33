package secrets

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Count is Redact with the findings added up: s with its secrets replaced
// by markers, and how many were replaced.
func Count(s string) (string, int) {
	out, findings := Redact(s)
	return out, countFindings(findings)
}

func countFindings(findings []Finding) int {
	n := 0
	for _, f := range findings {
		n += f.Count
	}
	return n
}

// JSONStrings returns the arguments text of a tool call with the secrets in
// its string values replaced, and how many were replaced. Valid JSON stays
// valid and keeps every byte outside the strings that held a secret, which
// are decoded, redacted and encoded again (so a secret written with JSON
// escapes, such as a password between \" quotes, is found); text that is not
// JSON is redacted as it is. Arguments without a secret are returned as
// they are.
func JSONStrings(a string) (string, int) {
	if !json.Valid([]byte(a)) {
		return Count(a)
	}
	var b strings.Builder
	n, last := 0, 0
	for i := 0; i < len(a); i++ {
		if a[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(a) && a[j] != '"' {
			if a[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(a) {
			break
		}
		var s string
		if json.Unmarshal([]byte(a[i:j+1]), &s) == nil {
			if red, found := Count(s); found > 0 {
				b.WriteString(a[last:i])
				b.WriteString(jsonString(red))
				last, n = j+1, n+found
			}
		}
		i = j
	}
	if n == 0 {
		return a, 0
	}
	b.WriteString(a[last:])
	return b.String(), n
}

// jsonString encodes s as a JSON string literal without HTML escapes, so
// that engine tags in it stay visible to transcript.Neutralize.
func jsonString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}
