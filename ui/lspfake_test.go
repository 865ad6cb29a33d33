package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/tally-dev/tally/engine/lsp"
)

// fakeLSPArg is the first argument with which the test binary plays a
// language server (see fakeLanguageServer); the second is its mode.
const fakeLSPArg = "--tally-ui-fake-lsp"

// init runs the fake server before the tests' main when the binary was
// started as one: by the session's language-server manager, through the
// sandbox's helper (which is started with arguments of its own).
func init() {
	if len(os.Args) > 2 && os.Args[1] == fakeLSPArg {
		os.Exit(fakeLanguageServer(os.Args[2]))
	}
}

// useFakeServers points the user's language-server file at a fresh
// config folder naming the fake servers (name → mode) for files ending
// in ".<name>", and turns the built-in servers off.
func useFakeServers(t *testing.T, servers map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	entries := map[string]any{}
	for _, d := range lsp.Defaults() {
		entries[d.Name] = map[string]any{"disabled": true}
	}
	for name, mode := range servers {
		entries[name] = map[string]any{"command": exe, "args": []string{fakeLSPArg, mode},
			"extensions": []string{"." + name}, "languages": []string{name}}
	}
	writeLSPConfig(t, cfg, map[string]any{"servers": entries})
}

// writeLSPConfig writes v as tally/lsp.json under the config folder cfg.
func writeLSPConfig(t *testing.T, cfg string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cfg, "tally"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "tally", lsp.FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeStdio is the fake server's end of its pipes.
type fakeStdio struct{}

func (fakeStdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (fakeStdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (fakeStdio) Close() error                { return nil }

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// fakeLanguageServer plays a language server on stdin and stdout:
// "crash" writes a line to stderr and exits at once; "ok" publishes, for
// every opened or changed file, an error for each line holding BAD, a
// warning for WARN and a hint for HINT, with the file's version.
func fakeLanguageServer(mode string) int {
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
				"textDocumentSync": map[string]any{"openClose": true, "change": 1, "save": map[string]any{"includeText": false}}}}, nil
		case "textDocument/didOpen", "textDocument/didChange":
			publishFake(ctx, c, req.Method, params)
		case "exit":
			close(done)
		case "shutdown":
		default:
			if !req.Notif {
				return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: req.Method}
			}
		}
		return nil, nil
	})
	c := jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(fakeStdio{}, jsonrpc2.VSCodeObjectCodec{}), h, jsonrpc2.SetLogger(quietLogger{}))
	select {
	case <-c.DisconnectNotify():
	case <-done:
	}
	return 0
}

// publishFake publishes the diagnostics of an opened or changed file.
func publishFake(ctx context.Context, c *jsonrpc2.Conn, method string, params json.RawMessage) {
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
		for word, sev := range map[string]int{"BAD": 1, "WARN": 2, "HINT": 4} {
			if col := strings.Index(line, word); col >= 0 {
				diags = append(diags, map[string]any{
					"range":    map[string]any{"start": map[string]any{"line": i, "character": col}, "end": map[string]any{"line": i, "character": col + len(word)}},
					"severity": sev, "message": word + " is not allowed", "source": "fake",
				})
			}
		}
	}
	_ = c.Notify(ctx, "textDocument/publishDiagnostics", map[string]any{"uri": p.TextDocument.URI, "version": p.TextDocument.Version, "diagnostics": diags})
}
