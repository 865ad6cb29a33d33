package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
)

// BenchmarkDiagnosticsPerEdit runs pairs of turns through gopls: one
// whose write_file adds a type error to a Go file, one that fixes it. It
// reports the time per turn (the edit, its diagnostics wait and the
// instant model) and how many tokens the diagnostics add to the
// conversation per edit.
func BenchmarkDiagnosticsPerEdit(b *testing.B) {
	program := findServer(b, "gopls")
	cfg := lsp.Defaults()[0]
	cfg.Command = program
	const bad = "package calc\n\nfunc Add(a, b int) int {\n\treturn \"x\"\n}\n"
	const good = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
	script := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if r.ToolResultsSinceHuman() > 0 {
			return llmtest.Text("done")
		}
		text := bad
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "fix it") {
			text = good
		}
		args, _ := json.Marshal(map[string]string{"path": "calc/calc.go", "content": text})
		return llmtest.Call("write_file", string(args))
	})
	h := newHarness(b, script, tool.ApproveAll{})
	os.WriteFile(filepath.Join(h.ws, "go.mod"), []byte("module example.com/demo\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(h.ws, "calc"), 0o755)
	os.WriteFile(filepath.Join(h.ws, "calc", "calc.go"), []byte(good), 0o644)
	h.cfg.LSP = LSPConfig{Servers: []lsp.ServerConfig{cfg}, Settle: 30 * time.Second}
	h.cfg.Now = time.Now
	s := h.session("bench")
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Run(ctx, "fix it"); err != nil { // the server's cold start, outside the timing
		b.Fatal(err)
	}
	start := len(s.Snapshot().Messages())
	b.ResetTimer()
	for range b.N {
		if _, err := s.Run(ctx, "break it"); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Run(ctx, "fix it"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	toks := 0
	for _, m := range s.Snapshot().Messages()[start:] {
		if m.Kind == transcript.KindDiagnostics {
			toks += tokens.Count(m.Text())
		}
	}
	b.ReportMetric(float64(toks)/float64(2*b.N), "diag-tokens/edit")
	b.ReportMetric(0, "ns/op") // the turn's time is reported per turn below
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N)/1e6, "ms/turn")
}
