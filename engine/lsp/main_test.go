package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/tally-dev/tally/internal/sandbox"
)

// fakeEnv names the mode in which the test binary acts as a language
// server (see fakeServer).
const fakeEnv = "TALLY_LSP_FAKE"

func TestMain(m *testing.M) {
	sandbox.RunHelperIfRequested()
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeServer(mode))
	}
	os.Exit(m.Run())
}

// repoRoot is the folder holding the module's go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

// findServer returns the program of a real language server: the one
// scripts/deps.sh installed in .tools, or one on PATH. It skips the test
// when there is none (or, for the Node servers, no node).
func findServer(t testing.TB, program string) string {
	t.Helper()
	root := repoRoot(t)
	for _, p := range []string{
		filepath.Join(root, ".tools", "bin", program),
		filepath.Join(root, ".tools", "npm", "node_modules", ".bin", program),
	} {
		if executableFile(p) {
			return nodeCheck(t, p)
		}
	}
	if p, err := exec.LookPath(program); err == nil {
		return nodeCheck(t, p)
	}
	t.Skipf("%s is not installed; run `bash scripts/deps.sh` (or `make deps`) to install the language servers the tests use", program)
	return ""
}

// nodeCheck skips the test when p is a Node script and node is missing.
func nodeCheck(t testing.TB, p string) string {
	t.Helper()
	if strings.Contains(p, "node_modules") {
		if _, err := exec.LookPath("node"); err != nil {
			t.Skipf("%s needs node, which is not on PATH; install Node.js", p)
		}
	}
	return p
}

// serverConfig returns the default configuration of the server name with
// program as its command.
func serverConfig(t testing.TB, name, program string) ServerConfig {
	t.Helper()
	for _, sc := range Defaults() {
		if sc.Name == name {
			sc.Command = program
			return sc
		}
	}
	t.Fatalf("no default server %q", name)
	return ServerConfig{}
}

// writeFiles writes files (path → content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// acquire acquires a manager for dir with servers, logs in a temporary
// folder and the given waits, released at the end of the test.
func acquire(t testing.TB, dir string, opts Options) *Manager {
	t.Helper()
	opts.Workspace = dir
	if opts.LogDir == "" {
		opts.LogDir = t.TempDir()
	}
	m, release := Acquire(opts)
	t.Cleanup(release)
	return m
}

// fakeConfig is a server played by the test binary in mode, for files
// ending in ext.
func fakeConfig(t testing.TB, name, mode, ext string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Name: name, Command: exe, Extensions: []string{ext}, Languages: []string{"fake"}, Env: []string{fakeEnv + "=" + mode}}
}

// stdio is the fake server's end of its pipes.
type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return nil }

// fakeServer plays a language server on stdin and stdout:
//
//   - "crash" writes a line to stderr and exits with status 3 at once;
//   - "ok" answers initialize and publishes, for every opened or changed
//     file, an error for each line containing "BAD", with the version;
//   - "noversion" does the same without versions, in two publishes;
//   - "deaf" answers initialize, then stops reading at the first file;
//   - "weird" is "ok" that first sends malformed diagnostics;
//   - "garbage" writes what is not a message after initialize.
func fakeServer(mode string) int {
	if mode == "crash" {
		fmt.Fprintln(os.Stderr, "fake server: simulated crash")
		return 3
	}
	done := make(chan struct{})
	h := jsonrpc2.HandlerWithError(func(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		var params json.RawMessage
		if req.Params != nil {
			params = *req.Params
		}
		switch req.Method {
		case "initialize":
			return map[string]any{"capabilities": map[string]any{
				"textDocumentSync":   map[string]any{"openClose": true, "change": 1, "save": map[string]any{"includeText": false}},
				"definitionProvider": true, "documentSymbolProvider": true,
			}}, nil
		case "initialized":
			if mode == "garbage" {
				fmt.Fprint(os.Stdout, "this is not a message header\r\n\r\n")
			}
			return nil, nil
		case "textDocument/didOpen", "textDocument/didChange":
			if mode == "deaf" {
				select {} // blocks the reading goroutine: nothing more is read
			}
			fakePublish(ctx, c, mode, req.Method, params)
			return nil, nil
		case "textDocument/definition":
			var p struct {
				TextDocument struct {
					URI string `json:"uri"`
				} `json:"textDocument"`
			}
			_ = json.Unmarshal(params, &p)
			return []map[string]any{{"uri": p.TextDocument.URI, "range": map[string]any{
				"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 1}}}}, nil
		case "shutdown":
			return nil, nil
		case "exit":
			close(done)
			return nil, nil
		}
		if req.Notif {
			return nil, nil
		}
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: req.Method}
	})
	c := jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(stdio{}, codec{}), h, jsonrpc2.SetLogger(discardLogger{}))
	select {
	case <-c.DisconnectNotify():
	case <-done:
	}
	return 0
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// fakePublish publishes the diagnostics of an opened or changed file.
func fakePublish(ctx context.Context, c *jsonrpc2.Conn, mode, method string, params json.RawMessage) {
	var p struct {
		TextDocument struct {
			URI     string `json:"uri"`
			Version int32  `json:"version"`
			Text    string `json:"text"`
		} `json:"textDocument"`
		ContentChanges []struct {
			Text string `json:"text"`
		} `json:"contentChanges"`
	}
	_ = json.Unmarshal(params, &p)
	content := p.TextDocument.Text
	if method == "textDocument/didChange" && len(p.ContentChanges) > 0 {
		content = p.ContentChanges[0].Text
	}
	diags := []map[string]any{}
	for i, line := range strings.Split(content, "\n") {
		if col := strings.Index(line, "BAD"); col >= 0 {
			diags = append(diags, map[string]any{
				"range":    map[string]any{"start": map[string]any{"line": i, "character": col}, "end": map[string]any{"line": i, "character": col + 3}},
				"severity": 1, "message": "BAD is not allowed", "source": "fake", "code": 7,
			})
		}
	}
	uri := p.TextDocument.URI
	switch mode {
	case "weird":
		_ = c.Notify(ctx, "textDocument/publishDiagnostics", map[string]any{"uri": "file:///outside/x.fake", "diagnostics": diags})
		_ = c.Notify(ctx, "textDocument/publishDiagnostics", map[string]any{"uri": "not a uri", "diagnostics": 5})
		_ = c.Notify(ctx, "textDocument/publishDiagnostics", map[string]any{"uri": uri, "diagnostics": []any{
			map[string]any{"range": "nowhere", "severity": "fatal", "message": 3},
			map[string]any{"range": map[string]any{"start": map[string]any{"line": -1, "character": 0}}, "message": "negative"},
		}})
		_ = c.Notify(ctx, "window/logMessage", map[string]any{"type": 3, "message": strings.Repeat("x", 10000)})
		_ = c.Notify(ctx, "workspace/unknownThing", nil)
		go func() { // requests wait for their answers, which this goroutine's caller reads
			var ignored any
			_ = c.Call(ctx, "workspace/configuration", map[string]any{"items": []any{map[string]any{"section": "fake"}}}, &ignored)
			_ = c.Call(ctx, "weird/request", nil, &ignored)
		}()
		fallthrough
	case "ok":
		_ = c.Notify(ctx, "textDocument/publishDiagnostics", map[string]any{"uri": uri, "version": p.TextDocument.Version, "diagnostics": diags})
	case "noversion":
		_ = c.Notify(ctx, "textDocument/publishDiagnostics", map[string]any{"uri": uri, "diagnostics": []any{}})
		time.Sleep(100 * time.Millisecond)
		_ = c.Notify(ctx, "textDocument/publishDiagnostics", map[string]any{"uri": uri, "diagnostics": diags})
	}
}

var _ io.Reader = stdio{}
