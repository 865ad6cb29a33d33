package tool

import (
	"context"
	"encoding/json"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// defaultSecretFiles is the deny list used when Env.SecretFiles is nil.
var defaultSecretFiles = []string{
	// Environment files.
	".env", ".env.*", "*.env",
	// Private keys and certificates with keys.
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk",
	"id_rsa*", "id_ed25519*", "id_ecdsa*", "id_dsa*",
	// Credentials of common tools.
	".aws/credentials", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass",
	".git-credentials", ".docker/config.json", ".kube/config", ".vault-token",
	".htpasswd", ".s3cfg", ".boto", "credentials.json", "*.tfstate", "*.tfstate.backup",
	// Password databases.
	"*.kdbx",
}

// DefaultSecretFiles returns a fresh copy of the secret-file deny list used
// when Env.SecretFiles is nil, for callers that want to extend or trim it.
// A pattern without a slash matches the base name at any depth (".env",
// "*.pem"); one with a slash matches the trailing path components
// (".aws/credentials" matches "home/.aws/credentials"). Patterns use
// [path.Match] syntax and match without regard to ASCII case.
func DefaultSecretFiles() []string { return slices.Clone(defaultSecretFiles) }

// secretFiles is the deny list in effect for env.
func (e *Env) secretFiles() []string {
	if e == nil || e.SecretFiles == nil {
		return defaultSecretFiles
	}
	return e.SecretFiles
}

// MatchSecretFile reports whether rel, a slash-separated workspace-relative
// path, matches one of patterns (see [DefaultSecretFiles] for their form).
func MatchSecretFile(patterns []string, rel string) bool {
	rel = strings.ToLower(strings.Trim(rel, "/"))
	if rel == "" || rel == "." {
		return false
	}
	parts := strings.Split(rel, "/")
	for _, p := range patterns {
		p = strings.ToLower(strings.Trim(p, "/"))
		if p == "" {
			continue
		}
		n := strings.Count(p, "/") + 1
		if n > len(parts) {
			continue
		}
		if ok, _ := path.Match(p, strings.Join(parts[len(parts)-n:], "/")); ok {
			return true
		}
	}
	return false
}

type secretReadKey struct{}

// WithSecretReadAllowed returns a context under which the file tools read,
// search, edit or write a path on the secret-file deny list instead of
// refusing it. It is meant for the one call the user has allowed; the
// contents still go through redaction in [Registry.Run].
func WithSecretReadAllowed(ctx context.Context) context.Context {
	return context.WithValue(ctx, secretReadKey{}, true)
}

func secretReadAllowed(ctx context.Context) bool {
	ok, _ := ctx.Value(secretReadKey{}).(bool)
	return ok
}

// secretPath returns the path that puts name (rel in slash form) on env's
// deny list: rel itself, or the workspace path its symlinks lead to.
func (w *wsRoot) secretPath(env *Env, rel, name string) (string, bool) {
	patterns := env.secretFiles()
	if len(patterns) == 0 {
		return "", false
	}
	if MatchSecretFile(patterns, rel) {
		return rel, true
	}
	if real, err := w.resolve(name); err == nil {
		if r := filepath.ToSlash(real); r != rel && MatchSecretFile(patterns, r) {
			return r, true
		}
	}
	return "", false
}

// refuseSecret is the error Result of a tool call refused because what
// matches the deny list; did is what would have happened ("read", "edited"),
// act the action the user may allow ("read", "edit").
func refuseSecret(tool, what, did, act string) Result {
	return errorf(tool, "%q matches the secret-file deny list and was not %s; ask the user to allow this one %s if it is really needed", what, did, act)
}

// SecretTarget reports whether a call of the built-in file tool name with
// args targets a path on env's secret-file deny list, and which path:
// read_file, edit_file and write_file by their path, grep when its path is
// a file (grep skips such files when searching a directory). The approval
// gate asks the user about such calls and runs an allowed one under
// [WithSecretReadAllowed]. Calls that would fail anyway (bad arguments, a
// path outside the workspace, a file to read that does not exist) report
// false.
func SecretTarget(env *Env, name string, args json.RawMessage) (rel string, ok bool) {
	var p struct {
		Path string `json:"path"`
	}
	switch name {
	case "read_file", "edit_file", "write_file", "grep":
	default:
		return "", false
	}
	if err := json.Unmarshal(normalizeArgs(args), &p); err != nil || p.Path == "" {
		return "", false
	}
	w, err := openWorkspace(env, p.Path)
	if err != nil {
		return "", false
	}
	defer w.Close()
	rel, fname, err := w.confine(p.Path)
	if err != nil {
		return "", false
	}
	fi, _, statErr := w.stat(fname)
	switch {
	case statErr == nil && fi.IsDir():
		return "", false
	case statErr != nil && name != "write_file":
		// Nothing to read; creating a secret file is guarded, though.
		return "", false
	}
	return w.secretPath(env, rel, fname)
}
