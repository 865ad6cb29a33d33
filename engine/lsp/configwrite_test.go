package lsp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readTop reads the file at path as its top-level keys and its servers'
// entries.
func readTop(t *testing.T, path string) (map[string]json.RawMessage, map[string]map[string]json.RawMessage) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	var servers map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top["servers"], &servers); err != nil {
		t.Fatal(err)
	}
	for _, entry := range servers {
		for k, v := range entry {
			entry[k] = json.RawMessage(compact(v))
		}
	}
	return top, servers
}

// compact is raw without its spaces.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// byName finds the server name in servers.
func byName(servers []ServerConfig, name string) (ServerConfig, bool) {
	i := slices.IndexFunc(servers, func(s ServerConfig) bool { return s.Name == name })
	if i < 0 {
		return ServerConfig{}, false
	}
	return servers[i], true
}

// SaveServer creates the folder and the file (0600), and LoadConfig
// reads back what was saved; saving again replaces the entry's fields
// and keeps the others, the other entries and unknown keys.
func TestSaveServer(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new", "tally", FileName)
	zls := ServerConfig{Command: "zls", Args: []string{"--stdio"}, Extensions: []string{".zig", ".zon"},
		Languages: []string{"zig"}, InitOptions: json.RawMessage(`{"semantic_tokens": "full"}`)}
	if err := SaveServer(path, "zls", zls); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the saved file: %v, %v", fi, err)
	}
	got, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := byName(got, "zls")
	if !ok || g.Command != "zls" || !slices.Equal(g.Args, zls.Args) || !slices.Equal(g.Extensions, zls.Extensions) ||
		!slices.Equal(g.Languages, zls.Languages) || compact(g.InitOptions) != `{"semantic_tokens":"full"}` {
		t.Fatalf("read back %+v (found %v)", g, ok)
	}
	if len(got) != len(Defaults())+1 {
		t.Errorf("servers %v", names(got))
	}

	writeFiles(t, filepath.Dir(path), map[string]string{FileName: `{"note": "mine", "servers": {
		"zls": {"command": "zls", "extensions": [".zig"], "env": {"ZIG": "1"}, "disabled": true},
		"other": {"command": "o", "extensions": [".o"]}}}`})
	if err := SaveServer(path, "zls", ServerConfig{Command: "/opt/zls", Extensions: []string{".zig"}}); err != nil {
		t.Fatal(err)
	}
	top, servers := readTop(t, path)
	if string(top["note"]) != `"mine"` || servers["other"] == nil {
		t.Errorf("other keys lost: %v", top)
	}
	z := servers["zls"]
	if string(z["command"]) != `"/opt/zls"` || string(z["disabled"]) != "true" || string(z["env"]) != `{"ZIG":"1"}` || z["args"] != nil {
		t.Errorf("the saved entry %v", z)
	}

	// A built-in name overrides the built-in server.
	if err := SaveServer(path, "gopls", ServerConfig{Command: "/opt/gopls", Extensions: []string{".go"}, Env: []string{"GOTOOLCHAIN=local"}}); err != nil {
		t.Fatal(err)
	}
	_, servers = readTop(t, path)
	if g := servers["gopls"]; string(g["command"]) != `"/opt/gopls"` || string(g["env"]) != `{"GOTOOLCHAIN":"local"}` {
		t.Errorf("the gopls override %v", g)
	}
}

// Bad servers are refused with one sentence naming what is wrong, and
// the file is left alone.
func TestSaveServerRefusesBadServers(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	good := ServerConfig{Command: "zls", Extensions: []string{".zig"}}
	for _, c := range []struct {
		name string
		edit func(*ServerConfig)
		want string
	}{
		{"", func(*ServerConfig) {}, "has no name"},
		{"bad name", func(*ServerConfig) {}, "cannot be used"},
		{"zls", func(c *ServerConfig) { c.Command = " " }, "has no command"},
		{"zls", func(c *ServerConfig) { c.Extensions = nil }, "has no extensions"},
		{"zls", func(c *ServerConfig) { c.Extensions = []string{"zig"} }, `extension "zig"`},
		{"zls", func(c *ServerConfig) { c.InitOptions = json.RawMessage(`{"a":`) }, "not valid JSON"},
	} {
		sc := good
		c.edit(&sc)
		err := SaveServer(path, c.name, sc)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), ". ") > 0 {
			t.Errorf("SaveServer(%q, %+v) = %v, want one sentence saying %q", c.name, sc, err, c.want)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused server wrote the file: %v", err)
	}
	writeFiles(t, filepath.Dir(path), map[string]string{FileName: `{"servers": [}`})
	if err := SaveServer(path, "zls", good); err == nil || !strings.Contains(err.Error(), "not changed") {
		t.Errorf("saving into a broken file: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"servers": [}` {
		t.Errorf("the broken file was overwritten: %s", data)
	}
}

// Removing a user server drops it; removing a built-in server's
// override restores the built-in one; the others are kept.
func TestRemoveServer(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	writeFiles(t, dir, map[string]string{FileName: `{"servers": {
		"zls": {"command": "zls", "extensions": [".zig"]},
		"gopls": {"command": "/opt/gopls", "extensions": [".go"]},
		"clangd": {"disabled": true}}}`})
	for _, name := range []string{"zls", "gopls", "rust-analyzer"} {
		if err := RemoveServer(path, name); err != nil {
			t.Fatalf("RemoveServer(%s): %v", name, err)
		}
	}
	got, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := byName(got, "zls"); ok {
		t.Error("zls is still configured")
	}
	if g, _ := byName(got, "gopls"); g.Command != "gopls" || len(g.Env) == 0 {
		t.Errorf("gopls is not the built-in one again: %+v", g)
	}
	if _, ok := byName(got, "clangd"); ok {
		t.Error("removing other servers enabled clangd")
	}
	if err := RemoveServer(path, "nosuch"); err == nil || !strings.Contains(err.Error(), `no server "nosuch"`) {
		t.Errorf("removing an unknown server: %v", err)
	}
}

// Disabling marks the entry (or adds one for a built-in server) and
// keeps its fields; enabling clears the mark, and drops an entry that
// was only the mark. ListServers lists the disabled ones too.
func TestDisableServer(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	writeFiles(t, dir, map[string]string{FileName: `{"servers": {"zls": {"command": "zls", "extensions": [".zig"], "env": {"A": "1"}}}}`})
	for _, name := range []string{"zls", "clangd"} {
		if err := DisableServer(path, name, true); err != nil {
			t.Fatal(err)
		}
	}
	got, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := byName(got, "zls"); ok {
		t.Error("the disabled zls is configured")
	}
	if _, ok := byName(got, "clangd"); ok {
		t.Error("the disabled clangd is configured")
	}
	_, servers := readTop(t, path)
	if string(servers["zls"]["env"]) != `{"A":"1"}` || string(servers["clangd"]["disabled"]) != "true" || len(servers["clangd"]) != 1 {
		t.Errorf("entries %v", servers)
	}
	listed, err := ListServers(path)
	if err != nil {
		t.Fatal(err)
	}
	var marks []string
	for _, s := range listed {
		marks = append(marks, s.Name+map[bool]string{true: " off", false: ""}[s.Disabled]+map[bool]string{true: " built-in", false: ""}[s.BuiltIn])
	}
	want := []string{"gopls built-in", "pyright built-in", "typescript-language-server built-in", "rust-analyzer built-in", "clangd off built-in", "zls off"}
	if !slices.Equal(marks, want) {
		t.Errorf("ListServers %q, want %q", marks, want)
	}
	if c := listed[4]; !slices.Contains(c.Extensions, ".cpp") || !c.InFile {
		t.Errorf("the disabled clangd is listed as %+v", c)
	}

	for _, name := range []string{"zls", "clangd", "pyright"} {
		if err := DisableServer(path, name, false); err != nil {
			t.Fatal(err)
		}
	}
	_, servers = readTop(t, path)
	if _, ok := servers["clangd"]; ok || servers["zls"]["disabled"] != nil || servers["pyright"] != nil {
		t.Errorf("entries after enabling %v", servers)
	}
	got, err = LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := byName(got, "zls"); !ok {
		t.Error("the enabled zls is not configured")
	}
	if _, ok := byName(got, "clangd"); !ok {
		t.Error("the enabled clangd is not configured")
	}
	if err := DisableServer(path, "nosuch", true); err == nil || !strings.Contains(err.Error(), "add it first") {
		t.Errorf("disabling an unknown server: %v", err)
	}
}
