package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMatchSecretFile(t *testing.T) {
	patterns := DefaultSecretFiles()
	matched := []string{
		".env", "app/.env", ".env.local", "deploy/.env.production", "prod.env",
		"certs/server.pem", "tls.key", "home/.ssh/id_rsa", "id_rsa.pub", "id_ed25519",
		".aws/credentials", "home/me/.aws/credentials", ".netrc", ".npmrc", ".pypirc",
		"store.p12", "cert.PFX", ".git-credentials", ".docker/config.json", "vault.kdbx",
		".kube/config", "terraform.tfstate", "ENV/.ENV",
	}
	for _, rel := range matched {
		if !MatchSecretFile(patterns, rel) {
			t.Errorf("%q is not matched by the default deny list", rel)
		}
	}
	allowed := []string{
		".", "", "main.go", "env.go", ".envrc.md/x.go", "docs/keys.md", "aws/credentials",
		"credentials", "config.json", ".docker/daemon.json", "src/.environment", "keynote/x",
	}
	for _, rel := range allowed {
		if MatchSecretFile(patterns, rel) {
			t.Errorf("%q is matched by the default deny list", rel)
		}
	}
	if MatchSecretFile(nil, ".env") {
		t.Error("an empty list matched")
	}
	if !MatchSecretFile([]string{"config/*.yml"}, "deploy/config/prod.yml") || MatchSecretFile([]string{"config/*.yml"}, "prod.yml") {
		t.Error("a pattern with a slash does not match the trailing path components")
	}
	// The returned list is a copy the caller may change.
	patterns[0] = "changed"
	if DefaultSecretFiles()[0] == "changed" {
		t.Error("DefaultSecretFiles returned the shared list")
	}
}

// secretWorkspace plants a .env with a value that no secret rule redacts, so
// the tests see whether the deny list, not redaction, kept it out.
func secretWorkspace(t *testing.T) (string, *Env) {
	t.Helper()
	ws, env := newWorkspace(t, map[string]string{
		".env":        "DB_NAME=plainvalue-needle\n",
		"cfg/.env.ci": "CI_NAME=plainvalue-needle\n",
		"main.go":     "package main // needle\n",
	})
	return ws, env
}

func TestSecretFilesAreRefused(t *testing.T) {
	_, env := secretWorkspace(t)
	cases := []struct {
		tool Tool
		args map[string]any
		want string
	}{
		{ReadFile(), map[string]any{"path": ".env"},
			`read_file: ".env" matches the secret-file deny list and was not read; ask the user to allow this one read if it is really needed`},
		{ReadFile(), map[string]any{"path": "cfg/.env.ci"}, `"cfg/.env.ci" matches the secret-file deny list and was not read`},
		{Grep(), map[string]any{"pattern": "needle", "path": ".env"},
			`grep: ".env" matches the secret-file deny list and was not searched; ask the user to allow this one search if it is really needed`},
		{EditFile(), map[string]any{"path": ".env", "old_string": "plainvalue", "new_string": "x"},
			`edit_file: ".env" matches the secret-file deny list and was not edited; ask the user to allow this one edit if it is really needed`},
		{WriteFile(), map[string]any{"path": ".env", "content": "x"},
			`write_file: ".env" matches the secret-file deny list and was not written; ask the user to allow this one write if it is really needed`},
		{WriteFile(), map[string]any{"path": "new/id_rsa", "content": "x"}, `"new/id_rsa" matches the secret-file deny list`},
	}
	for _, tc := range cases {
		t.Run(tc.tool.Spec().Name+" "+tc.args["path"].(string), func(t *testing.T) {
			res := call(t, tc.tool, env, tc.args)
			if !res.IsError || res.Wrote {
				t.Fatalf("IsError=%v Wrote=%v: %s", res.IsError, res.Wrote, res.Content)
			}
			if !strings.Contains(res.Content, tc.want) {
				t.Errorf("got  %s\nwant %s", res.Content, tc.want)
			}
			if strings.Contains(res.Content, "plainvalue") {
				t.Errorf("the content leaked: %s", res.Content)
			}
		})
	}
	ws := env.Workspace
	if got := readWS(t, ws, ".env"); got != "DB_NAME=plainvalue-needle\n" {
		t.Errorf(".env changed to %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "new", "id_rsa")); err == nil {
		t.Error("new/id_rsa was written")
	}
}

func TestSecretFilesThroughSymlinks(t *testing.T) {
	ws, env := secretWorkspace(t)
	if err := os.Symlink(".env", filepath.Join(ws, "notes.txt")); err != nil {
		t.Skip(err)
	}
	os.MkdirAll(filepath.Join(ws, ".aws"), 0o755)
	os.WriteFile(filepath.Join(ws, ".aws", "credentials"), []byte("name = plainvalue-needle\n"), 0o600)
	os.Symlink(".aws", filepath.Join(ws, "awsconf"))
	for _, p := range []string{"notes.txt", "awsconf/credentials"} {
		res := call(t, ReadFile(), env, map[string]any{"path": p})
		if !res.IsError || !strings.Contains(res.Content, "secret-file deny list") || strings.Contains(res.Content, "plainvalue") {
			t.Errorf("read_file %s: %s", p, res.Content)
		}
	}
	for _, p := range []string{".", "awsconf"} {
		res := call(t, Grep(), env, map[string]any{"pattern": "plainvalue", "path": p})
		if strings.Contains(res.Content, "plainvalue-needle") {
			t.Errorf("grep %s found text of a secret file through a symlink:\n%s", p, res.Content)
		}
	}
}

func TestGrepSkipsSecretFiles(t *testing.T) {
	_, env := secretWorkspace(t)
	res := call(t, Grep(), env, map[string]any{"pattern": "needle"})
	if res.IsError {
		t.Fatal(res.Content)
	}
	mustContain(t, res.Content, "main.go:1: package main // needle", "[skipped 2 files on the secret-file deny list]")
	if strings.Contains(res.Content, "plainvalue") {
		t.Errorf("grep showed a secret file:\n%s", res.Content)
	}
	// Even with the one-call allowance, a directory search skips them.
	res = Grep().Run(WithSecretReadAllowed(context.Background()), env, json.RawMessage(`{"pattern":"needle"}`))
	if strings.Contains(res.Content, "plainvalue") {
		t.Errorf("grep of a directory showed a secret file:\n%s", res.Content)
	}
	// list_dir still shows the names.
	res = call(t, ListDir(), env, map[string]any{"depth": 2})
	mustContain(t, res.Content, ".env (", "cfg/.env.ci (")
}

func TestSecretReadAllowed(t *testing.T) {
	ws, env := secretWorkspace(t)
	ctx := WithSecretReadAllowed(context.Background())
	run := func(tool Tool, args string) Result { return tool.Run(ctx, env, json.RawMessage(args)) }

	if res := run(ReadFile(), `{"path":".env"}`); res.IsError || !strings.Contains(res.Content, "DB_NAME=plainvalue-needle") {
		t.Errorf("allowed read_file: %s", res.Content)
	}
	if res := run(Grep(), `{"pattern":"needle","path":".env"}`); res.IsError || !strings.Contains(res.Content, ".env:1:") {
		t.Errorf("allowed grep: %s", res.Content)
	}
	if res := run(EditFile(), `{"path":".env","old_string":"DB_NAME","new_string":"DB"}`); res.IsError {
		t.Errorf("allowed edit_file: %s", res.Content)
	}
	if res := run(WriteFile(), `{"path":"cfg/.env.ci","content":"CI=1\n"}`); res.IsError {
		t.Errorf("allowed write_file: %s", res.Content)
	}
	if got := readWS(t, ws, ".env") + readWS(t, ws, "cfg/.env.ci"); got != "DB=plainvalue-needle\nCI=1\n" {
		t.Errorf("files = %q", got)
	}
	// The allowance is per context: a plain call is refused again.
	if res := call(t, ReadFile(), env, map[string]any{"path": ".env"}); !res.IsError {
		t.Errorf("read without the allowance: %s", res.Content)
	}
}

func TestEnvSecretFiles(t *testing.T) {
	_, env := secretWorkspace(t)
	none := &Env{Workspace: env.Workspace, SecretFiles: []string{}}
	if res := call(t, ReadFile(), none, map[string]any{"path": ".env"}); res.IsError {
		t.Errorf("an empty deny list still refused: %s", res.Content)
	}
	custom := &Env{Workspace: env.Workspace, SecretFiles: []string{"*.go"}}
	if res := call(t, ReadFile(), custom, map[string]any{"path": ".env"}); res.IsError {
		t.Errorf("a custom list without .env refused it: %s", res.Content)
	}
	if res := call(t, ReadFile(), custom, map[string]any{"path": "main.go"}); !res.IsError {
		t.Errorf("a custom list did not refuse main.go: %s", res.Content)
	}
}

func TestSecretTarget(t *testing.T) {
	ws, env := secretWorkspace(t)
	os.Symlink(".env", filepath.Join(ws, "notes.txt"))
	cases := []struct {
		tool, args string
		want       string
		ok         bool
	}{
		{"read_file", `{"path":".env"}`, ".env", true},
		{"read_file", `{"path":"./cfg/../.env","limit":3}`, ".env", true},
		{"read_file", `{"path":"notes.txt"}`, ".env", true},
		{"edit_file", `{"path":"cfg/.env.ci","old_string":"a","new_string":"b"}`, "cfg/.env.ci", true},
		{"write_file", `{"path":"keys/new.pem","content":"x"}`, "keys/new.pem", true},
		{"grep", `{"pattern":"x","path":".env"}`, ".env", true},
		{"grep", `{"pattern":"x"}`, "", false},
		{"grep", `{"pattern":"x","path":"cfg"}`, "", false},
		{"read_file", `{"path":"main.go"}`, "", false},
		{"read_file", `{"path":"missing/.env"}`, "", false},
		{"read_file", `{"path":"../.env"}`, "", false},
		{"read_file", `not json`, "", false},
		{"list_dir", `{"path":".env"}`, "", false},
		{"run_shell", `{"command":"cat .env"}`, "", false},
	}
	for _, tc := range cases {
		rel, ok := SecretTarget(env, tc.tool, json.RawMessage(tc.args))
		if rel != tc.want || ok != tc.ok {
			t.Errorf("SecretTarget(%s, %s) = %q, %v; want %q, %v", tc.tool, tc.args, rel, ok, tc.want, tc.ok)
		}
	}
	if _, ok := SecretTarget(&Env{Workspace: ws, SecretFiles: []string{}}, "read_file", json.RawMessage(`{"path":".env"}`)); ok {
		t.Error("an empty deny list still reports a target")
	}
}
