package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLooksSecret(t *testing.T) {
	for _, name := range []string{
		"OPENAI_API_KEY", "DEEPSEEK_API_KEY", "ANTHROPIC_API_KEY", "MY_SECRET_TOKEN", "github_token",
		"DB_PASSWORD", "PASSWD", "AWS_CREDENTIALS", "SSH_AUTH_SOCK", "COOKIE_JAR", "SESSION_ID", "PRIVATE_DIR", "ApiKey",
	} {
		if !LooksSecret(name) {
			t.Errorf("LooksSecret(%q) = false", name)
		}
	}
	for _, name := range []string{"PATH", "HOME", "GOPRIVATE", "GOFLAGS", "LANG"} {
		if LooksSecret(name) {
			t.Errorf("LooksSecret(%q) = true", name)
		}
	}
}

func TestEnviron(t *testing.T) {
	base := []string{
		"PATH=/usr/bin", "HOME=/home/u", "OPENAI_API_KEY=sk-abc", "MY_SECRET_TOKEN=tok", "LC_ALL=C.UTF-8",
		"GOPATH=/home/u/go", "GOPRIVATE=example.com/*", "DISPLAY=:0", "EXTRA=1", "EXTRA_KEY=2",
		"HTTPS_PROXY=http://user:hunter2@proxy:3128", "HTTP_PROXY=http://proxy:3128", "GOPROXY=https://u:p@goproxy.example,direct",
		"TZ=UTC", "TZ=Europe/Paris", "malformed", "=x",
	}
	got := Environ(base, []string{"EXTRA", "EXTRA_KEY", "OPENAI_API_KEY"})
	want := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C.UTF-8", "GOPATH=/home/u/go", "GOPRIVATE=example.com/*",
		"EXTRA=1", "HTTP_PROXY=http://proxy:3128", "TZ=Europe/Paris",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Environ =\n%q\nwant\n%q", got, want)
	}
	for _, kv := range got {
		for _, secret := range []string{"sk-abc", "tok", "hunter2", "u:p@"} {
			if strings.Contains(kv, secret) {
				t.Errorf("secret %q passed in %q", secret, kv)
			}
		}
	}
}

func TestToolchainDirs(t *testing.T) {
	got := toolchainDirs([]string{
		"PATH=/usr/local/go/bin:/bin:relative:/home/u/.cargo/bin", "HOME=/", "GOROOT=/opt/go/", "VIRTUAL_ENV=",
	})
	want := []string{"/usr/local/go/bin", "/usr/local/go", "/bin", "/home/u/.cargo/bin", "/home/u/.cargo", "/opt/go"}
	if !slices.Equal(got, want) {
		t.Errorf("toolchainDirs = %q, want %q", got, want)
	}
}

func TestSessionTempDir(t *testing.T) {
	root := t.TempDir()
	dir, err := SessionTempDir(root, "s-1.a_B")
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(root, "s-1.a_B") {
		t.Errorf("dir = %q", dir)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("stat = %v, %v", fi, err)
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", "a b"} {
		if _, err := SessionTempDir(root, bad); err == nil {
			t.Errorf("SessionTempDir(%q) succeeded", bad)
		}
	}
	if _, err := SessionTempDir("", "s"); err == nil {
		t.Error("an empty root was accepted")
	}
}

// A proxy that takes a token as its user name, with no password
// (HTTPS_PROXY=http://TOKEN@proxy), passed the password-only check and
// reached every command, MCP server and diagnostics run.
func TestProxyUserNameTokenNeverReachesCommands(t *testing.T) {
	const token = "ghx7Qk2ZpL9mW4vR8tB1"
	base := []string{
		"PATH=/usr/local/opt/node@18/bin:/usr/bin",
		"HTTPS_PROXY=http://" + token + "@proxy.corp.example:8080",
		"https_proxy=" + token + "@proxy.corp.example:8080",
		"ALL_PROXY=socks5://" + token + ":@proxy.corp.example:1080",
		"HTTP_PROXY=http://proxy.corp.example:8080",
		"GOPROXY=https://proxy.golang.org,https://" + token + "@goproxy.corp.example|direct",
		"NO_PROXY=localhost,127.0.0.1,.corp.example",
		"LDFLAGS=-Wl,@linker.rsp",
	}
	got := Environ(base, nil)
	want := []string{
		"PATH=/usr/local/opt/node@18/bin:/usr/bin", "HTTP_PROXY=http://proxy.corp.example:8080",
		"NO_PROXY=localhost,127.0.0.1,.corp.example", "LDFLAGS=-Wl,@linker.rsp",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Environ =\n%q\nwant\n%q", got, want)
	}
	for _, kv := range got {
		if strings.Contains(kv, token) {
			t.Errorf("the proxy token passed in %q", kv)
		}
	}
}

func TestHasURLCredentials(t *testing.T) {
	for v, want := range map[string]bool{
		"http://user:pw@proxy:3128":             true,
		"http://TOKEN@proxy:3128":               true,
		"TOKEN@proxy:3128":                      true,
		"https://:pw@proxy":                     true,
		"direct,https://u@goproxy.example|off":  true,
		"http://proxy:3128":                     false,
		"https://example.com/users/@me":         false,
		"/opt/homebrew/Cellar/node@18/bin:/bin": false,
		"-Wl,@file.rsp":                         false,
		"":                                      false,
	} {
		if got := hasURLCredentials(v); got != want {
			t.Errorf("hasURLCredentials(%q) = %v, want %v", v, got, want)
		}
	}
}
