package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func names(scs []ServerConfig) []string {
	var out []string
	for _, sc := range scs {
		out = append(out, sc.Name)
	}
	return out
}

func TestDefaults(t *testing.T) {
	d := Defaults()
	want := []string{"gopls", "pyright", "typescript-language-server", "rust-analyzer", "clangd"}
	if !slices.Equal(names(d), want) {
		t.Fatalf("defaults %v", names(d))
	}
	ts := d[2]
	for _, ext := range []string{".ts", ".tsx", ".js", ".jsx"} {
		if !slices.Contains(ts.Extensions, ext) {
			t.Errorf("typescript-language-server lacks %s", ext)
		}
	}
	if ts.Command != "typescript-language-server" || !slices.Equal(ts.Args, []string{"--stdio"}) || d[1].Command != "pyright-langserver" {
		t.Errorf("commands %+v %+v", ts, d[1])
	}
	if got := ts.languageFor("a/b.tsx"); got != "typescriptreact" {
		t.Errorf("language of .tsx = %q", got)
	}
	d[0].Args = append(d[0].Args, "changed")
	if len(Defaults()[0].Args) != 0 {
		t.Error("Defaults shares its slices")
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	if got, err := LoadConfig(filepath.Join(dir, "missing.json")); err != nil || len(got) != 5 {
		t.Fatalf("a missing file: %v, %v", names(got), err)
	}
	path := filepath.Join(dir, "lsp.json")
	writeFiles(t, dir, map[string]string{"lsp.json": `{"servers": {
		"gopls": {"command": "/opt/gopls", "args": ["-remote=auto"], "extensions": [".go", "mod"], "init_options": {"staticcheck": true}, "env": {"B": "2", "A": "1"}},
		"clangd": {"disabled": true},
		"zls": {"command": "zls", "extensions": [".zig"], "languages": ["zig"]}
	}}`})
	got, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"gopls", "pyright", "typescript-language-server", "rust-analyzer", "zls"}; !slices.Equal(names(got), want) {
		t.Fatalf("servers %v, want %v", names(got), want)
	}
	g := got[0]
	if g.Command != "/opt/gopls" || !slices.Equal(g.Extensions, []string{".go", ".mod"}) || string(g.InitOptions) != `{"staticcheck": true}` ||
		!slices.Equal(g.Env, []string{"A=1", "B=2"}) || len(g.Languages) != 0 {
		t.Errorf("replaced gopls %+v", g)
	}
	for _, bad := range []struct{ file, want string }{
		{`{"servers": {"x": {"command": "x"}}}`, `"extensions"`},
		{`{"servers": {"x": {"extensions": [".x"]}}}`, `"command"`},
		{`{"servers": {"x": {"command": "x", "extensions": [".x"], "typo": 1}}}`, "typo"},
		{`{"servers": {"bad name": {"command": "x", "extensions": [".x"]}}}`, "bad name"},
		{`{"servers": []}`, "not valid"},
		{`{"servers": {}} trailing`, "extra text"},
	} {
		writeFiles(t, dir, map[string]string{"lsp.json": bad.file})
		_, err := LoadConfig(path)
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("LoadConfig(%s) = %v, want an error naming %s and %s", bad.file, err, path, bad.want)
		}
	}
}

func TestUserPath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	if p, err := UserPath(); err != nil || p != filepath.Join("/cfg", "tally", "lsp.json") {
		t.Errorf("UserPath = %q, %v", p, err)
	}
}

func TestLookupConfinesPath(t *testing.T) {
	ws := t.TempDir()
	bin := filepath.Join(ws, "bin")
	writeFiles(t, ws, map[string]string{"bin/fake-ls": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(bin, "fake-ls"), 0o755); err != nil {
		t.Fatal(err)
	}
	sc := ServerConfig{Name: "fake", Command: "fake-ls", Extensions: []string{".x"}}
	m := acquire(t, ws, Options{Servers: []ServerConfig{sc}, Env: []string{"PATH=" + bin + ":relative:/usr/bin", "HOME=/h"}})
	if st := m.Status()[0]; st.State != StateNotInstalled {
		t.Errorf("a server found only inside the workspace was %+v", st)
	}
	if p := envValue(m.env, "PATH"); p != "/usr/bin" {
		t.Errorf("PATH = %q", p)
	}
	if prog, why := lookup(ServerConfig{Name: "x", Command: "./x"}, "/usr/bin", nil); prog != "" || !strings.Contains(why, "relative path") {
		t.Errorf("lookup of a relative command = %q, %q", prog, why)
	}
}

func TestAvailableScan(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"node_modules/x/a.ts": "", ".git/hooks/b.py": "", "vendor/c.rs": "",
		"src/deep/main.go": "package main\n",
	})
	exe, _ := os.Executable()
	var servers []ServerConfig
	for _, sc := range Defaults() {
		sc.Command = exe
		servers = append(servers, sc)
	}
	m := acquire(t, dir, Options{Servers: servers})
	if got := names(m.Available()); !slices.Equal(got, []string{"gopls"}) {
		t.Errorf("Available = %v, want only gopls (the rest are in skipped folders)", got)
	}
}

func TestCodecAndPositions(t *testing.T) {
	var buf bytes.Buffer
	if err := (codec{}).WriteObject(&buf, map[string]int{"a": 1}); err != nil || buf.String() != "Content-Length: 7\r\n\r\n{\"a\":1}" {
		t.Fatalf("write %q %v", buf.String(), err)
	}
	var v map[string]int
	in := "\r\ncontent-length: 7\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{\"a\":2}"
	if err := (codec{}).ReadObject(bufio.NewReader(strings.NewReader(in)), &v); err != nil || v["a"] != 2 {
		t.Errorf("read %v %v", v, err)
	}
	for _, bad := range []string{
		"hello world\r\n\r\n{}", "Content-Length: x\r\n\r\n{}", "Content-Length: 999999999999\r\n\r\n",
		"Content-Length: 5\r\n\r\n{}", "Content-Length: 2\r\n\r\n[1", strings.Repeat("x", 2000) + "\r\n",
	} {
		if err := (codec{}).ReadObject(bufio.NewReader(strings.NewReader(bad)), &v); err == nil {
			t.Errorf("read %q: no error", bad[:min(len(bad), 40)])
		}
	}
	line := "a𐐀é\tb"
	for _, c := range []struct{ units, col int }{{0, 1}, {1, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}, {9, 9}} {
		if got := runeColumn(line, c.units); got != c.col {
			t.Errorf("runeColumn(%d) = %d, want %d", c.units, got, c.col)
		}
		if c.units != 2 {
			if got := utf16Offset(line, c.col); got != c.units {
				t.Errorf("utf16Offset(%d) = %d, want %d", c.col, got, c.units)
			}
		}
	}
	for _, p := range []string{"/tmp/a b/c#d.go", "/x/ü.py"} {
		if got := uriPath(fileURI(p)); got != p {
			t.Errorf("round trip of %q: %q (%s)", p, got, fileURI(p))
		}
	}
	for _, u := range []string{"", "http://x/y", "file:relative", "%zz", "untitled:Untitled-1"} {
		if got := uriPath(u); got != "" {
			t.Errorf("uriPath(%q) = %q", u, got)
		}
	}
}

func TestRenderAndNewIn(t *testing.T) {
	set := Set{
		"b.go": {{Path: "b.go", Line: 3, Column: 2, Severity: "warning", Message: "two\nlines", Source: "vet"}},
		"a.go": {
			{Path: "a.go", Line: 1, Column: 1, Severity: "error", Message: "x", Source: "compiler", Code: "E1"},
			{Path: "a.go", Line: 9, Column: 4, Severity: "error", Message: "x", Code: "E1"},
		},
	}
	want := "a.go:1:1: error: x (compiler)\na.go:9:4: error: x\nb.go:3:2: warning: two lines (vet)\n"
	if got := Render(set, 0); got != want {
		t.Errorf("Render =\n%s want\n%s", got, want)
	}
	if got := Render(set, 2); got != "a.go:1:1: error: x (compiler)\na.go:9:4: error: x\n(1 more omitted)\n" {
		t.Errorf("Render capped =\n%s", got)
	}
	if Render(Set{}, 5) != "" {
		t.Error("an empty set renders text")
	}
	// One copy of x moved, a third copy is new, the warning went away.
	after := Set{"a.go": {
		{Path: "a.go", Line: 2, Column: 1, Severity: "error", Message: "x", Code: "E1"},
		{Path: "a.go", Line: 10, Column: 4, Severity: "error", Message: "x", Code: "E1"},
		{Path: "a.go", Line: 11, Column: 4, Severity: "error", Message: "x", Code: "E1"},
		{Path: "a.go", Line: 12, Column: 1, Severity: "warning", Message: "x", Code: "E1"},
	}}
	got := NewIn(set, after)
	if len(got["a.go"]) != 2 || got["a.go"][0].Line != 11 || got["a.go"][1].Severity != "warning" || len(got) != 1 {
		t.Errorf("NewIn = %+v", got)
	}
	if len(set.Errors()) != 2 {
		t.Errorf("Errors = %+v", set.Errors())
	}
}

func TestToolSpecsAreStable(t *testing.T) {
	m := acquire(t, t.TempDir(), Options{Servers: []ServerConfig{}})
	a, b := Tools(m), Tools(m)
	var names []string
	for i, tl := range a {
		sa, sb := tl.Spec(), b[i].Spec()
		ja, _ := json.Marshal(sa)
		jb, _ := json.Marshal(sb)
		if !bytes.Equal(ja, jb) || tl.NeedsApproval() {
			t.Errorf("%s: unstable spec or needs approval", sa.Name)
		}
		var schema map[string]any
		if err := json.Unmarshal(sa.Parameters, &schema); err != nil || schema["type"] != "object" || schema["properties"] == nil {
			t.Errorf("%s: parameters %s", sa.Name, sa.Parameters)
		}
		names = append(names, sa.Name)
	}
	if !slices.Equal(names, []string{"lsp_definition", "lsp_references", "lsp_symbols", "lsp_hover"}) {
		t.Errorf("tools %v", names)
	}
	res := a[0].Run(t.Context(), nil, []byte(`{"path":"x.go","line":1,"column":1,"extra":1}`))
	if !res.IsError || !strings.Contains(res.Content, "unknown parameter") {
		t.Errorf("an unknown parameter: %+v", res)
	}
}
