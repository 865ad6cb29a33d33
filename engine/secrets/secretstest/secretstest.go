// Package secretstest makes fake credentials of the kinds engine/secrets
// must catch, for tests: random-looking (high entropy) and reproducible
// from a seed, never real.
package secretstest

import (
	"math/rand/v2"
	"strings"
)

// Alphabets of the fake credentials.
const (
	Alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	Upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	Base64 = Alnum + "+/"
)

// Chars returns n characters of alphabet, the same for the same seed.
func Chars(seed uint64, alphabet string, n int) string {
	r := rand.New(rand.NewPCG(seed, seed*7+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// Set is one fake credential of each common kind.
type Set struct {
	AWSKeyID, AWSSecret   string
	GitHubPAT, GitHubFine string
	OpenAIProj, OpenAIKey string
	PEMBody               string // the base64 lines of the key
	PEM                   string // the whole -----BEGIN … PRIVATE KEY----- block
}

// New returns a Set derived from seed.
func New(seed uint64) Set {
	s := seed * 100
	var body strings.Builder
	for i := range 6 {
		body.WriteString(Chars(s+10+uint64(i), Base64, 64))
		body.WriteByte('\n')
	}
	return Set{
		AWSKeyID:   "AKIA" + Chars(s+1, Upper, 16),
		AWSSecret:  Chars(s+2, Base64, 40),
		GitHubPAT:  "ghp_" + Chars(s+3, Alnum, 36),
		GitHubFine: "github_pat_" + Chars(s+4, Alnum+"_", 82),
		OpenAIProj: "sk-proj-" + Chars(s+5, Alnum, 74) + "T3BlbkFJ" + Chars(s+6, Alnum, 74),
		OpenAIKey:  "sk-" + Chars(s+7, Alnum, 48),
		PEMBody:    body.String(),
		PEM:        "-----BEGIN RSA PRIVATE KEY-----\n" + body.String() + "-----END RSA PRIVATE KEY-----\n",
	}
}

// Values lists the set's secrets, each as it would appear in a file (the
// PEM key by its first line).
func (s Set) Values() map[string]string {
	return map[string]string{
		"AWS key id": s.AWSKeyID, "AWS secret": s.AWSSecret, "GitHub token": s.GitHubPAT,
		"GitHub fine-grained token": s.GitHubFine, "OpenAI project key": s.OpenAIProj,
		"OpenAI key": s.OpenAIKey, "PEM private key": strings.SplitN(s.PEMBody, "\n", 2)[0],
	}
}
