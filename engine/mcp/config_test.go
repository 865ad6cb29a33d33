package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/internal/serverlog"
)

func TestParse(t *testing.T) {
	data := `{"mcpServers": {
		"fs": {"command": "npx", "args": ["-y", "server-fs"], "env": {"A": "1"}, "timeout": 30, "allowReadOnly": true},
		"remote": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer x"}, "disabled": true},
		"typed": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"}
	}, "otherClientSetting": 1}`
	cfg, err := Parse([]byte(data), "user.json")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Names(), []string{"fs", "remote", "typed"}) {
		t.Fatalf("names = %v", cfg.Names())
	}
	fs := cfg.Servers["fs"]
	if fs.Kind() != TypeStdio || fs.CallTimeout() != 30*time.Second || fs.ConnectTimeout() != 30*time.Second || !fs.AllowReadOnly || fs.Source != "user.json" || fs.Env["A"] != "1" {
		t.Errorf("fs = %+v", fs)
	}
	if r := cfg.Servers["remote"]; r.Kind() != TypeHTTP || !r.Disabled || r.CallTimeout() != DefaultTimeout {
		t.Errorf("remote = %+v", r)
	}
	if short := (ServerConfig{Command: "x", Timeout: 0.5}); short.CallTimeout() != 500*time.Millisecond || short.ConnectTimeout() != MinConnectTimeout {
		t.Errorf("short timeouts: call %v, connect %v", short.CallTimeout(), short.ConnectTimeout())
	}
	if cfg.Servers["typed"].Kind() != TypeHTTP {
		t.Errorf("typed = %+v", cfg.Servers["typed"])
	}
	if cfg, err := Parse([]byte("  \n"), "empty.json"); err != nil || len(cfg.Servers) != 0 {
		t.Errorf("empty file = %+v, %v", cfg, err)
	}
}

func TestParseErrorsNameFileAndServer(t *testing.T) {
	cases := []struct{ data, want string }{
		{`{"mcpServers": {"bad name": {"command": "x"}}}`, `"bad name" may only hold`},
		{`{"mcpServers": {"` + strings.Repeat("a", 33) + `": {"command": "x"}}}`, "longer than 32"},
		{`{"mcpServers": {"both": {"command": "x", "url": "http://a"}}}`, `"both" sets both a command and a url`},
		{`{"mcpServers": {"none": {}}}`, `"none" has neither a command nor a url`},
		{`{"mcpServers": {"ftp": {"url": "ftp://a/b"}}}`, `"ftp" has url "ftp://a/b"`},
		{`{"mcpServers": {"neg": {"command": "x", "timeout": -1}}}`, `"neg" has a negative timeout`},
		{`{"mcpServers": {"kind": {"type": "carrier-pigeon", "command": "x"}}}`, `"kind" has an unknown type`},
		{`{"mcpServers": {"env": {"command": "x", "env": {"A=B": "1"}}}}`, `"env" has an invalid environment variable name`},
		{`{"mcpServers": [1, 2]}`, "is not valid MCP configuration JSON"},
		{`{"mcpServers": {"s": {"command": 5}}}`, "is not valid MCP configuration JSON"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.data), "/home/u/.config/tally/mcp.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "/home/u/.config/tally/mcp.json") {
			t.Errorf("Parse(%s) = %v, want an error with the file and %q", c.data, err, c.want)
		}
	}
}

func TestUserPath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/custom/config")
	if p, err := UserPath(); err != nil || p != filepath.Join("/custom/config", "tally", "mcp.json") {
		t.Errorf("UserPath = %q, %v", p, err)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	dir, err := os.UserConfigDir()
	if p, err2 := UserPath(); err != nil || err2 != nil || p != filepath.Join(dir, "tally", "mcp.json") {
		t.Errorf("UserPath = %q, %v (config dir %q, %v)", p, err2, dir, err)
	}
}

func TestWorkspaceTrust(t *testing.T) {
	ws := t.TempDir()
	if cfg, wf, err := LoadWorkspace(ws, nil); err != nil || wf.NeedsTrust || len(cfg.Servers) != 0 || wf.Path != "" {
		t.Fatalf("no file: %+v %+v %v", cfg, wf, err)
	}
	content := []byte(`{"mcpServers": {"repo-tool": {"command": "./tool"}}}`)
	if err := os.MkdirAll(filepath.Join(ws, ".tally"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(WorkspacePath(ws), content, 0o644); err != nil {
		t.Fatal(err)
	}
	trusted := map[string]bool{}
	isTrusted := func(h string) bool { return trusted[h] }

	cfg, wf, err := LoadWorkspace(ws, isTrusted)
	if err != nil || !wf.NeedsTrust || len(cfg.Servers) != 0 {
		t.Fatalf("untrusted: cfg %+v, wf %+v, %v; want no servers and NeedsTrust", cfg, wf, err)
	}
	if want, _ := TrustHash(ws, content, wf.Preview); wf.Hash != want || wf.Hash == "" || len(wf.Preview.Servers) != 1 {
		t.Errorf("wf = %+v", wf)
	}
	trusted[wf.Hash] = true
	cfg, wf, err = LoadWorkspace(ws, isTrusted)
	if err != nil || wf.NeedsTrust || cfg.Servers["repo-tool"].Command != "./tool" {
		t.Fatalf("trusted: %+v %+v %v", cfg, wf, err)
	}
	// Any change to the file needs trust again.
	if err := os.WriteFile(WorkspacePath(ws), []byte(`{"mcpServers": {"repo-tool": {"command": "./evil"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, wf, err := LoadWorkspace(ws, isTrusted); err != nil || !wf.NeedsTrust || len(cfg.Servers) != 0 {
		t.Fatalf("changed file: %+v %+v %v; want trust asked again", cfg, wf, err)
	}
	if err := os.WriteFile(WorkspacePath(ws), []byte(`{"mcpServers": {"x y": {"command": "a"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadWorkspace(ws, isTrusted); err == nil || !strings.Contains(err.Error(), WorkspacePath(ws)) {
		t.Errorf("invalid workspace file: %v", err)
	}
}

func TestMergeUserFirst(t *testing.T) {
	user := Config{Servers: map[string]ServerConfig{"git": {Command: "user-git"}, "a": {Command: "a"}}}
	ws := Config{Servers: map[string]ServerConfig{"git": {Command: "repo-git"}, "b": {Command: "b"}}}
	got, notes := Merge(user, ws)
	if got.Servers["git"].Command != "user-git" || !slices.Equal(got.Names(), []string{"a", "b", "git"}) {
		t.Errorf("merged = %+v", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `"git"`) {
		t.Errorf("notes = %v", notes)
	}
}

func TestSaveKeepsOtherKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tally", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"theme": "dark", "mcpServers": {"old": {"command": "o"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Set("new", ServerConfig{URL: "https://example.test/mcp", Headers: map[string]string{"Authorization": "Bearer t"}}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.SetDisabled("old", true); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Set("bad name", ServerConfig{Command: "x"}); err == nil {
		t.Error("Set accepted an invalid name")
	}
	if err := cfg.SetDisabled("missing", true); err == nil {
		t.Error("SetDisabled accepted an unknown server")
	}
	if err := Save(path, cfg); err != nil {
		t.Fatal(err)
	}
	back, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Servers["old"].Disabled || back.Servers["new"].Headers["Authorization"] != "Bearer t" {
		t.Errorf("saved = %+v", back)
	}
	raw, _ := os.ReadFile(path)
	var top map[string]any
	if json.Unmarshal(raw, &top) != nil || top["theme"] != "dark" || strings.Contains(string(raw), "Source") {
		t.Errorf("saved file = %s", raw)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("saved file mode = %v, %v; want 0600", fi.Mode(), err)
	}
	back.Remove("old")
	if err := Save(path, back); err != nil {
		t.Fatal(err)
	}
	if again, _ := LoadFile(path); !slices.Equal(again.Names(), []string{"new"}) {
		t.Errorf("after remove = %v", again.Names())
	}
	if err := os.WriteFile(path, []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Save(path, back); err == nil || !strings.Contains(err.Error(), "not overwritten") {
		t.Errorf("Save over a broken file = %v", err)
	}
}

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	if got := ToolName("github", "create_issue"); got != "mcp__github__create_issue" {
		t.Errorf("plain name = %q", got)
	}
	long := strings.Repeat("x", 80)
	cases := [][2]string{{"fs", "read.file"}, {"fs", "read/file"}, {"fs", "lire_fichier_été"}, {"srv", long}, {strings.Repeat("s", 32), long}}
	seen := map[string]bool{}
	for _, c := range cases {
		got := ToolName(c[0], c[1])
		if !nameRE.MatchString(got) || !strings.HasPrefix(got, "mcp__") {
			t.Errorf("ToolName(%q, %q) = %q, outside the function-name charset or over 64 bytes", c[0], c[1], got)
		}
		if got != ToolName(c[0], c[1]) {
			t.Errorf("ToolName(%q, %q) is not stable", c[0], c[1])
		}
		if seen[got] {
			t.Errorf("ToolName(%q, %q) = %q collides", c[0], c[1], got)
		}
		seen[got] = true
	}
	if ToolName("fs", "read.file") == ToolName("fs", "read/file") {
		t.Error("names differing only in replaced characters collide")
	}
}

func TestObjectSchema(t *testing.T) {
	cases := []struct {
		in      any
		want    string
		wrapped bool
	}{
		{map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}},
			`{"properties":{"a":{"type":"string"}},"type":"object"}`, false},
		{map[string]any{"properties": map[string]any{}}, `{"properties":{},"type":"object"}`, false},
		{map[string]any{"type": "object"}, `{"properties":{},"type":"object"}`, false},
		{map[string]any{"type": "string"}, `{"properties":{"input":{"type":"string"}},"required":["input"],"type":"object"}`, true},
		{"oops", `{"properties":{},"type":"object"}`, false},
		{nil, `{"properties":{},"type":"object"}`, false},
		{[]any{1}, `{"properties":{},"type":"object"}`, false},
	}
	for _, c := range cases {
		got, wrapped := objectSchema(c.in)
		if string(got) != c.want || wrapped != c.wrapped {
			t.Errorf("objectSchema(%v) = %s, %v; want %s, %v", c.in, got, wrapped, c.want, c.wrapped)
		}
	}
}

func TestConvertResult(t *testing.T) {
	r := convertResult(&sdk.CallToolResult{
		Content: []sdk.Content{
			&sdk.TextContent{Text: `{"n": 1}`},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "hello"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///b.bin", Blob: []byte{1, 2, 3}}},
			&sdk.AudioContent{Data: []byte{1}, MIMEType: "audio/wav"},
		},
		StructuredContent: map[string]any{"n": 1},
	})
	want := "{\"n\": 1}\n[resource file:///a.txt, text/plain]\nhello\n[resource file:///b.bin, of unknown type, 3 bytes, not shown]\n[audio audio/wav, 1 bytes, not shown]"
	if r.Content != want || r.IsError {
		t.Errorf("content = %q, want %q (structured content already in the text is not repeated)", r.Content, want)
	}
	if r := convertResult(&sdk.CallToolResult{IsError: true}); !r.IsError || r.Content == "" {
		t.Errorf("empty error = %+v", r)
	}
	if r := convertResult(&sdk.CallToolResult{}); r.IsError || r.Content == "" {
		t.Errorf("empty result = %+v", r)
	}
}

func TestChildEnv(t *testing.T) {
	t.Setenv("TALLY_TEST_SECRET_SOURCE", "s3cret")
	base := []string{"PATH=/bin", "HOME=/h", "OPENAI_API_KEY=sk-x", "GITHUB_TOKEN=g", "RANDOM_VAR=r", "LC_ALL=C"}
	got, _ := childEnv(base, map[string]string{"GITHUB_TOKEN": "${TALLY_TEST_SECRET_SOURCE}", "PLAIN": "$HOME"}, false)
	want := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "GITHUB_TOKEN=s3cret", "PLAIN=$HOME"}
	if !slices.Equal(got, want) {
		t.Errorf("childEnv = %q, want %q", got, want)
	}
	if got, _ := childEnv(nil, nil, false); got == nil {
		t.Error("childEnv returned nil, which would make the child inherit everything")
	}
}

func TestStderrLogCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp", "srv.log")
	l := serverlog.New(path, 100)
	for i := range 50 {
		if _, err := l.Write([]byte(strings.Repeat("x", 9) + "\n")); err != nil {
			t.Fatal(err)
		}
		_ = i
	}
	l.Write([]byte("last words\npartial"))
	l.Close()
	for _, p := range []string{path, path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Size() > 100 {
			t.Errorf("%s: %v, %v; want at most 100 bytes", p, fi, err)
		}
	}
	if got := l.LastLine(); got != "partial" {
		t.Errorf("LastLine = %q", got)
	}
	l.Write([]byte("\n"))
	if got := l.LastLine(); got != "partial" {
		t.Errorf("LastLine after newline = %q", got)
	}
	quiet := serverlog.New("", 0)
	quiet.Write([]byte("no file\n"))
	if quiet.LastLine() != "no file" {
		t.Errorf("LastLine without a file = %q", quiet.LastLine())
	}
}

func TestSearchRanking(t *testing.T) {
	m := NewManager(Config{}, Options{})
	s := &server{name: "github", m: m, log: serverlog.New("", 0)}
	other := &server{name: "jira", m: m, log: serverlog.New("", 0)}
	m.addTools(s, []toolInfo{
		{Name: "createIssue", Description: "Create a new issue in a repository."},
		{Name: "list_issues", Description: "List the issues of a repository."},
		{Name: "get_file", Description: "Read a file of a repository; not for issues."},
	})
	m.addTools(other, []toolInfo{{Name: "create_ticket", Description: "Create a ticket (an issue) in a project."}})
	got := toolNames(m.Search("create issue", 3))
	want := []string{"mcp__github__createIssue", "mcp__jira__create_ticket", "mcp__github__list_issues"}
	if !slices.Equal(got, want) {
		t.Errorf("search = %v, want %v", got, want)
	}
	if got := toolNames(m.Search("jira", 5)); !slices.Equal(got, []string{"mcp__jira__create_ticket"}) {
		t.Errorf("search by server = %v", got)
	}
	if got := m.Search("  ", 5); len(got) != 0 {
		t.Errorf("blank search = %v", got)
	}
}
