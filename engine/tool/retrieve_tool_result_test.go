package tool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRetrieveToolResult(t *testing.T) {
	var text strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&text, "line %d\n", i)
	}
	sum := sha256.Sum256([]byte(text.String()))
	sha := hex.EncodeToString(sum[:])
	load := func(s string) ([]byte, error) {
		if s == sha || len(s) >= 12 && strings.HasPrefix(sha, s) {
			return []byte(text.String()), nil
		}
		return nil, errors.New("missing")
	}
	rt := RetrieveToolResult(load)
	run := func(args string) Result { return rt.Run(context.Background(), &Env{}, []byte(args)) }
	cases := []struct {
		name, args, want string
		isErr            bool
	}{
		{"first page", fmt.Sprintf(`{"sha":%q}`, sha), "lines 1-400 of 1000; call again with offset 401", false},
		{"a slice", fmt.Sprintf(`{"sha":%q,"offset":998,"limit":5}`, sha), " 998\tline 998\n 999\tline 999\n1000\tline 1000\n[lines 998-1000 of 1000; end of result]", false},
		{"upper-case sha", fmt.Sprintf(`{"sha":%q,"offset":1,"limit":1}`, strings.ToUpper(sha)), "   1\tline 1", false},
		{"unknown sha", fmt.Sprintf(`{"sha":%q}`, strings.Repeat("0", 64)), "nothing stored has sha", true},
		{"malformed sha", `{"sha":"abc"}`, "neither a hex SHA-256 nor a handle", true},
		{"handle of a dropped message", fmt.Sprintf(`{"sha":%q,"limit":1}`, "#"+sha[:12]), "   1\tline 1", false},
		{"offset past the end", fmt.Sprintf(`{"sha":%q,"offset":2000}`, sha), "past the end", true},
		{"unknown field", fmt.Sprintf(`{"sha":%q,"mode":"lines"}`, sha), "unknown parameter", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(c.args)
			if r.IsError != c.isErr || !strings.Contains(r.Content, c.want) {
				t.Errorf("got %v %q; want error=%v containing %q", r.IsError, r.Content, c.isErr, c.want)
			}
		})
	}
}
