package sandbox

import (
	"path/filepath"
	"strings"
)

// allowedVars are the variables commands inherit: the basic session, the
// locale and the toolchains' own settings. LC_* is matched as a prefix.
var allowedVars = setOf(
	// Session and locale.
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	// C toolchain.
	"CC", "CXX", "AR", "LD", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
	// Go.
	"GOPATH", "GOROOT", "GOBIN", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOPROXY",
	"GONOSUMDB", "GOSUMDB", "GOINSECURE", "GOTOOLCHAIN", "GOTELEMETRY", "GOENV", "GOWORK", "GOTMPDIR",
	"GOOS", "GOARCH", "GOAMD64", "GOARM", "GOEXPERIMENT", "CGO_ENABLED", "CGO_CFLAGS", "CGO_CXXFLAGS", "CGO_LDFLAGS",
	// Rust.
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "CARGO_TARGET_DIR",
	// JavaScript.
	"NODE_PATH", "NPM_CONFIG_CACHE", "npm_config_cache", "NPM_CONFIG_PREFIX", "npm_config_prefix",
	"NVM_DIR", "NVM_BIN", "COREPACK_HOME", "YARN_CACHE_FOLDER", "PNPM_HOME", "BUN_INSTALL", "DENO_DIR",
	// Python.
	"PIP_CACHE_DIR", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYENV_ROOT", "PYENV_VERSION",
	"CONDA_PREFIX", "CONDA_DEFAULT_ENV", "UV_CACHE_DIR", "POETRY_CACHE_DIR", "PYTHONDONTWRITEBYTECODE",
	// JVM, Ruby and others.
	"JAVA_HOME", "GRADLE_USER_HOME", "MAVEN_HOME", "M2_HOME", "GEM_HOME", "GEM_PATH", "BUNDLE_PATH",
	"RBENV_ROOT", "DOTNET_ROOT", "ZIG_GLOBAL_CACHE_DIR",
)

// toolchainDirVars are the allowed variables whose values are lists of
// directories the sandbox keeps readable and executable.
var toolchainDirVars = []string{
	"PATH", "HOME", "GOROOT", "GOPATH", "GOBIN", "CARGO_HOME", "RUSTUP_HOME", "NODE_PATH", "NVM_DIR",
	"PNPM_HOME", "BUN_INSTALL", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYENV_ROOT", "CONDA_PREFIX",
	"JAVA_HOME", "MAVEN_HOME", "M2_HOME", "GEM_HOME", "GEM_PATH", "RBENV_ROOT", "DOTNET_ROOT", "LD_LIBRARY_PATH",
}

// secretWords are the parts of a variable name that mark it as a secret.
var secretWords = []string{
	"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PRIVATE",
}

// notSecret are allowed names that contain a secret word but hold none.
var notSecret = setOf("GOPRIVATE")

// LooksSecret reports whether an environment variable name looks like it
// holds a secret: it contains KEY, TOKEN, SECRET, PASSWORD, PASSWD,
// CREDENTIAL, AUTH, COOKIE, SESSION or PRIVATE in any case (which covers
// OPENAI_API_KEY, ANTHROPIC_API_KEY, DEEPSEEK_API_KEY and the like).
// GOPRIVATE, a list of module patterns, is the one exception.
func LooksSecret(name string) bool {
	if notSecret[name] {
		return false
	}
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// Environ returns the entries of base ("NAME=value", as from os.Environ)
// that commands may see: the built-in allow-list (basic session variables,
// LC_*, and the toolchains' own variables such as GOPATH, CARGO_HOME or
// VIRTUAL_ENV) plus the names in extra. A name that [LooksSecret] never
// passes, even when listed, and neither does a value holding a URL with
// credentials, a user name alone included (a proxy or module proxy with a
// password or a token); see hasURLCredentials. The order of base is
// kept; for a name given twice the last value wins.
func Environ(base, extra []string) []string {
	allowed := setOf(extra...)
	last := map[string]int{}
	for i, kv := range base {
		if name, _, ok := strings.Cut(kv, "="); ok {
			last[name] = i
		}
	}
	var out []string
	for i, kv := range base {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || last[name] != i {
			continue
		}
		if !allowedVars[name] && !allowed[name] && !strings.HasPrefix(name, "LC_") {
			continue
		}
		if LooksSecret(name) || hasURLCredentials(value) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// hasURLCredentials reports whether value holds a URL with credentials:
// any userinfo, a password or a user name alone, such as
// https://user:token@proxy.example or http://TOKEN@proxy.example (proxies
// and module proxies that take a token as the user name). The value is
// split into parts on commas, pipes, semicolons and white space, as GOPROXY
// and NO_PROXY lists are; a part counts when its authority (what follows
// "://", or the part itself without a scheme, up to the first "/", "?" or
// "#") holds an "@" after some userinfo (a bare "@file", as in a linker
// response file, is none).
func hasURLCredentials(value string) bool {
	if !strings.Contains(value, "@") {
		return false
	}
	for _, part := range strings.FieldsFunc(value, func(r rune) bool {
		return r == ',' || r == '|' || r == ';' || r == ' ' || r == '\t' || r == '\n'
	}) {
		if _, after, ok := strings.Cut(part, "://"); ok {
			part = after
		}
		if end := strings.IndexAny(part, "/?#"); end >= 0 {
			part = part[:end]
		}
		if strings.LastIndexByte(part, '@') > 0 {
			return true
		}
	}
	return false
}

// toolchainDirs returns the directories named by the toolchain variables of
// env, and for every PATH entry ending in "bin" also its parent (the root
// of a toolchain such as /opt/go or ~/.cargo).
func toolchainDirs(env []string) []string {
	vars := map[string]string{}
	for _, kv := range env {
		if name, value, ok := strings.Cut(kv, "="); ok {
			vars[name] = value
		}
	}
	var dirs []string
	for _, name := range toolchainDirVars {
		for _, d := range filepath.SplitList(vars[name]) {
			dirs = append(dirs, d)
			if name == "PATH" && filepath.Base(d) == "bin" {
				dirs = append(dirs, filepath.Dir(d))
			}
		}
	}
	return cleanAbs(dirs)
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
