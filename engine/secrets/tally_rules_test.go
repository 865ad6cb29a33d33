package secrets

import (
	"strings"
	"testing"
)

// redactsAll fails t unless Redact removes every secret from text and
// reports rule among its findings.
func redactsAll(t *testing.T, text, rule string, secrets ...string) {
	t.Helper()
	out, findings := Redact(text)
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("secret %q survived in %q", s, out)
		}
	}
	found := false
	for _, f := range findings {
		found = found || f.Rule == rule
	}
	if !found {
		t.Errorf("Redact(%q) findings = %v, want %s", text, findings, rule)
	}
}

// A database URL in a dotenv file, a log line or a command kept its
// password: no rule looked at the userinfo of a URL.
func TestPostgresURLPasswordIsRedacted(t *testing.T) {
	pw := fake(50, alnum, 12)
	for _, text := range []string{
		"DATABASE_URL=postgres://admin:" + pw + "@db.example.com:5432/app\n",
		"connecting to postgresql://app_user:" + pw + "@10.0.0.5/orders ...",
		`dsn = "mysql://root:` + pw + `@localhost:3306/shop"`,
		"redis://:" + pw + "@cache:6379/0",
		"jdbc:postgresql://svc:p@ss!" + pw + "@db/app",
		"amqp://guest:PASS@rabbit/vhost",
	} {
		redactsAll(t, text, "url-credentials", pw, "PASS@", "p@ss!")
	}
	out, _ := Redact("postgres://admin:" + pw + "@db.example.com/app")
	if out != "postgres://"+Marker("url-credentials")+"@db.example.com/app" {
		t.Errorf("the host and path must stay: %q", out)
	}
}

// A proxy that takes a token as its user name (no password) leaked the
// token through HTTPS_PROXY in `env` output.
func TestProxyUserNameTokenIsRedacted(t *testing.T) {
	tok := fake(51, alnum, 24)
	redactsAll(t, "HTTPS_PROXY=http://"+tok+"@proxy.corp.example:8080\n", "url-credentials", tok)
	redactsAll(t, "git remote: https://x-access-token:"+tok+"@github.com/o/r.git", "url-credentials", tok)
}

// An opaque token after Bearer (not a GitHub or OpenAI key, which have
// their own rules) was kept whole.
func TestBearerOpaqueTokenIsRedacted(t *testing.T) {
	tok := fake(52, alnum+"-._~", 40)
	jwtish := fake(53, alnum, 20) + "." + fake(54, alnum+"_-", 30) + "." + fake(55, alnum+"_-", 20)
	for _, text := range []string{
		"Authorization: Bearer " + tok + "\n",
		`{"headers": {"authorization": "Bearer ` + tok + `"}}`,
		"> GET /v1/items HTTP/1.1\n> authorization: bearer " + tok + "\n",
		"token_type=Bearer " + jwtish,
	} {
		redactsAll(t, text, "bearer-token", tok[:16], jwtish)
	}
	redactsAll(t, "Authorization: Basic "+fake(56, base64, 28)+"==", "basic-auth", fake(56, base64, 28))
}

// Passwords full of symbols were missed: the generic rule only takes key
// characters.
func TestSymbolRichPasswordAssignmentIsRedacted(t *testing.T) {
	cases := []struct{ text, secret string }{
		{`password = "p@$$w0rd!#%&x"`, `p@$$w0rd!#%&x`},
		{`DB_PASS='a+b/c=d!e'`, `a+b/c=d!e`},
		{"DB_PASS=a+b/c=d!e\n", `a+b/c=d!e`},
		{"export PGPASSWORD=s3cr3t!x; psql", `s3cr3t!x`},
		{`{"db_password": "h^7&Kq(z)!"}`, `h^7&Kq(z)!`},
		{`$pass = 'tr0ub4dor&3';`, `tr0ub4dor&3`},
		{"database:\n  password: p@$$w0rd!x\n  host: db\n", `p@$$w0rd!x`},
		{`cfg.SMTPPassword := "w!ld card 42"`, `w!ld card 42`},
	}
	for _, tc := range cases {
		redactsAll(t, tc.text, "password-assignment", tc.secret)
	}
}

// The new rules must not touch ordinary text: empty and referenced
// passwords, Bearer in prose, URLs without credentials, user names alone.
func TestCredentialRulesLeaveBenignTextAlone(t *testing.T) {
	for _, in := range []string{
		`password = ""`,
		"password: ${DB_PASSWORD}\n",
		"DB_PASS=$DB_PASS_FROM_VAULT\n",
		`password = os.getenv("DB_PASSWORD")`,
		`"password": req.body.password,`,
		"password: this.password\n",
		"Bearer tokens are described in RFC 6750; send the Bearer header.",
		"Authorization: Bearer <token>",
		"Authorization: Bearer $TOKEN",
		"postgres://localhost/db",
		"postgres://localhost:5432/db?sslmode=disable",
		"git clone ssh://git@github.com/o/r.git",
		"see https://example.com/users/@me and mail x@example.com",
		`url = f"postgres://{user}:{password}@{host}/db"`,
		"postgres://user:${DB_PASSWORD}@db/app",
		"BYPASS_CACHE=true\nPWD=/home/u/project\n",
		"compass = 'north pole'",
	} {
		out, findings := Redact(in)
		if out != in || findings != nil {
			t.Errorf("Redact(%q) = %q, %v; want it unchanged", in, out, findings)
		}
	}
}
