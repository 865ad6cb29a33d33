package agent

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/tool"
)

// findServer returns the path of a language server's program: installed
// by the deps step under .tools, or on PATH; the test skips without it.
func findServer(t testing.TB, program string) string {
	t.Helper()
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	for _, dir := range []string{filepath.Join(root, ".tools", "bin"), filepath.Join(root, ".tools", "npm", "node_modules", ".bin")} {
		if p := filepath.Join(dir, program); isExecutable(p) {
			return p
		}
	}
	if p, err := exec.LookPath(program); err == nil {
		return p
	}
	t.Skipf("%s is not installed; run `bash scripts/deps.sh` to install the language servers", program)
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// An edit that breaks a file's types used to get no feedback outside Go
// (gofmt and go vet were the only checks). Through the language servers
// the next request carries the new error with its line; the fix that
// follows carries none.
func TestEditsGetTheLanguageServersDiagnostics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real language servers")
	}
	cases := []struct {
		server, program string
		files           map[string]string
		lib, bad, good  string
		want            string // what the error line says
	}{
		{"gopls", "gopls",
			map[string]string{"go.mod": "module example.com/demo\n\ngo 1.22\n"},
			"calc/calc.go", "package calc\n\nfunc Add(a, b int) int {\n\treturn \"x\"\n}\n", "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
			"calc/calc.go:4:"},
		{"pyright", "pyright-langserver", nil,
			"calc.py", "def add(a: int, b: int) -> int:\n    return \"x\"\n", "def add(a: int, b: int) -> int:\n    return a + b\n",
			"calc.py:2:"},
		{"typescript-language-server", "typescript-language-server", nil,
			"calc.ts", "export function add(a: number, b: number): number {\n  return \"x\";\n}\n", "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
			"calc.ts:2:"},
	}
	for _, c := range cases {
		t.Run(c.server, func(t *testing.T) {
			program := findServer(t, c.program)
			var cfg lsp.ServerConfig
			for _, d := range lsp.Defaults() {
				if d.Name == c.server {
					cfg = d
				}
			}
			cfg.Command = program
			script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
				results, fixing := 0, false
				for _, m := range r.Messages {
					if m.Role == "tool" {
						results++
					}
					if m.Role == "user" && strings.Contains(m.Content, "fix it") {
						fixing = true
					}
				}
				text := c.bad
				switch {
				case fixing && results < 2:
					text = c.good
				case fixing || results >= 1:
					return llmtest.Text("done")
				}
				args, _ := json.Marshal(map[string]string{"path": c.lib, "content": text})
				return llmtest.Call("write_file", string(args))
			})
			h := newHarness(t, script, tool.ApproveAll{})
			for name, body := range c.files {
				os.MkdirAll(filepath.Dir(filepath.Join(h.ws, name)), 0o755)
				os.WriteFile(filepath.Join(h.ws, name), []byte(body), 0o644)
			}
			os.MkdirAll(filepath.Dir(filepath.Join(h.ws, c.lib)), 0o755)
			os.WriteFile(filepath.Join(h.ws, c.lib), []byte(c.good), 0o644)
			h.cfg.LSP = LSPConfig{Servers: []lsp.ServerConfig{cfg}, Settle: 30 * time.Second}
			s := h.session("lsp")
			defer s.Close()
			ctx := context.Background()
			if _, err := s.Run(ctx, "break it"); err != nil {
				t.Fatal(err)
			}
			diags := lastDiagnostics(h, "break it")
			if !strings.Contains(diags, "new in the edited files") || !strings.Contains(diags, c.want) || !strings.Contains(diags, "error") {
				t.Fatalf("after the breaking edit the request carries %q; want an error at %s (servers: %+v)", diags, c.want, s.LanguageServers().Status())
			}
			if _, err := s.Run(ctx, "fix it"); err != nil {
				t.Fatal(err)
			}
			if after := lastDiagnostics(h, "fix it"); strings.Contains(after, c.want) {
				t.Fatalf("after the fix the request still carries %q", after)
			}
			h.noInvalid()
		})
	}
}

// lastDiagnostics is the <diagnostics> block of the turn prompted with
// prompt in the last request the server was sent, "" when it has none.
func lastDiagnostics(h *harness, prompt string) string {
	reqs := h.srv.Requests()
	last := reqs[len(reqs)-1]
	for i := len(last.Messages) - 1; i >= 0; i-- {
		m := last.Messages[i].Content
		if k := strings.Index(m, "<diagnostics>"); k >= 0 {
			return m[k:]
		}
		if last.Messages[i].Role == "user" && strings.Contains(m, prompt) {
			break
		}
	}
	return ""
}

// Files a shell command wrote got no check at all: only edit_file and
// write_file were followed by diagnostics. A command's created and
// modified files are now checked like an edit's.
func TestShellCommandsWritesAreChecked(t *testing.T) {
	if _, err := exec.LookPath("gofmt"); err != nil {
		t.Skip("gofmt is not installed")
	}
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if r.ToolResultsSinceHuman() > 0 {
			return llmtest.Text("done")
		}
		return llmtest.Call("run_shell", `{"command":"printf 'package calc\\nfunc  Add(a,b int) int { return a+b }\\n' > calc.go"}`)
	})
	h := newHarness(t, script, tool.ApproveAll{})
	h.cfg.LSP.Off = true
	s := h.session("shell-diag")
	defer s.Close()
	if _, err := s.Run(context.Background(), "write calc.go with the shell"); err != nil {
		t.Fatal(err)
	}
	if d := lastDiagnostics(h, "write calc.go with the shell"); !strings.Contains(d, "calc.go") {
		t.Fatalf("the command's file got no check: %q", d)
	}
}
