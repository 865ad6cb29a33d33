package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// benchTurn is the one scripted turn both front ends run: the model edits
// a file (a call that asks in the ask mode) and then answers.
func benchTurn() llmtest.Script {
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if req.ToolResultsSinceHuman() == 0 {
			return llmtest.Reply{Content: "Changing the limit.", Reasoning: "The limit is in NOTES.md.",
				ToolCalls: []llmtest.ToolCall{{Name: "edit_file", Arguments: `{"path":"NOTES.md","old_string":"limit: 1","new_string":"limit: 2"}`}}}
		}
		return llmtest.Reply{Content: "Done: the limit is now 2, in NOTES.md."}
	})
}

const benchPrompt = "Raise the limit to 2."

// benchWorkspace makes the workspace of one turn.
func benchWorkspace(b *testing.B) string {
	ws := filepath.Join(b.TempDir(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "NOTES.md"), []byte("# Notes\n\nlimit: 1\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return ws
}

// BenchmarkScriptedTurn runs the same scripted turn (one edit that asks,
// approved, then the answer) through `tally run` and through `tally acp`,
// all in process against the scripted model on loopback:
//
//   - run: one `tally run --yes` (opens the store, creates the session,
//     runs the turn, closes);
//   - acp: session/new and session/prompt on a running `tally acp`, the
//     client answering the approval, as an editor does after its first
//     turn;
//   - acp-cold: a `tally acp` started for the turn (initialize,
//     session/new, session/prompt, end of input), as an editor's first
//     turn.
//
// Reproduce: go test -run '^$' -bench ScriptedTurn -benchtime 50x ./cli
func BenchmarkScriptedTurn(b *testing.B) {
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	b.Setenv("OPENAI_API_KEY", "sk-bench")
	srv := llmtest.New(benchTurn())
	defer srv.Close()
	flags := []string{"--base-url", srv.URL(), "--model", "deepseek-chat", "--mode", "ask"}

	b.Run("run", func(b *testing.B) {
		data := b.TempDir()
		for b.Loop() {
			b.StopTimer()
			ws := benchWorkspace(b)
			b.StartTimer()
			args := append([]string{"run", "--data", data, "--workspace", ws, "--yes"}, flags...)
			if code := Main(append(args, benchPrompt), strings.NewReader(""), io.Discard, io.Discard); code != ExitOK {
				b.Fatalf("tally run exited %d", code)
			}
			b.StopTimer()
			checkEdited(b, ws)
			b.StartTimer()
		}
	})

	b.Run("acp", func(b *testing.B) {
		c := startACP(b, append([]string{"acp", "--data", b.TempDir()}, flags...))
		defer c.close()
		for b.Loop() {
			b.StopTimer()
			ws := benchWorkspace(b)
			b.StartTimer()
			c.turn(b, ws)
			b.StopTimer()
			checkEdited(b, ws)
			b.StartTimer()
		}
	})

	b.Run("acp-cold", func(b *testing.B) {
		data := b.TempDir()
		for b.Loop() {
			b.StopTimer()
			ws := benchWorkspace(b)
			b.StartTimer()
			c := startACP(b, append([]string{"acp", "--data", data}, flags...))
			c.turn(b, ws)
			c.close()
			b.StopTimer()
			checkEdited(b, ws)
			b.StartTimer()
		}
	})
}

// BenchmarkACPOverhead runs the turn of BenchmarkScriptedTurn through
// `tally run`, through a running `tally acp` and through a `tally acp`
// started for it, all three in each iteration in an order that rotates,
// so that a machine busy with other work (and whatever the previous turn
// left to collect) slows all alike. It reports the mean of each and what
// ACP adds: run-ms/turn, acp-ms/turn, acp-cold-ms/turn and
// acp-overhead-ms/turn (the running server against tally run; negative
// when its open store saves more than the protocol costs).
//
// Reproduce: go test -run '^$' -bench ACPOverhead -benchtime 60x ./cli
func BenchmarkACPOverhead(b *testing.B) {
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	b.Setenv("OPENAI_API_KEY", "sk-bench")
	srv := llmtest.New(benchTurn())
	defer srv.Close()
	flags := []string{"--base-url", srv.URL(), "--model", "deepseek-chat", "--mode", "ask"}
	runData, coldData := b.TempDir(), b.TempDir()
	c := startACP(b, append([]string{"acp", "--data", b.TempDir()}, flags...))
	defer c.close()
	legs := []func(ws string){
		func(ws string) {
			args := append([]string{"run", "--data", runData, "--workspace", ws, "--yes"}, flags...)
			if code := Main(append(args, benchPrompt), strings.NewReader(""), io.Discard, io.Discard); code != ExitOK {
				b.Fatalf("tally run exited %d", code)
			}
		},
		func(ws string) { c.turn(b, ws) },
		func(ws string) {
			cc := startACP(b, append([]string{"acp", "--data", coldData}, flags...))
			cc.turn(b, ws)
			cc.close()
		},
	}
	took := make([]time.Duration, len(legs))
	n := 0
	for b.Loop() {
		for k := range legs {
			leg := (n + k) % len(legs)
			b.StopTimer()
			ws := benchWorkspace(b)
			b.StartTimer()
			start := time.Now()
			legs[leg](ws)
			took[leg] += time.Since(start)
			b.StopTimer()
			checkEdited(b, ws)
			b.StartTimer()
		}
		n++
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(n) / 1e6 }
	b.ReportMetric(ms(took[0]), "run-ms/turn")
	b.ReportMetric(ms(took[1]), "acp-ms/turn")
	b.ReportMetric(ms(took[2]), "acp-cold-ms/turn")
	b.ReportMetric(ms(took[1]-took[0]), "acp-overhead-ms/turn")
}

func checkEdited(b *testing.B, ws string) {
	got, err := os.ReadFile(filepath.Join(ws, "NOTES.md"))
	if err != nil || !strings.Contains(string(got), "limit: 2") {
		b.Fatalf("the turn did not apply the edit: %q, %v", got, err)
	}
}

// acpClient is `tally acp` in process with the SDK's client on pipes.
type acpClient struct {
	conn  *acp.ClientSideConnection
	toSrv *io.PipeWriter
	done  chan int
}

func startACP(b *testing.B, args []string) *acpClient {
	srvIn, toSrv := io.Pipe()
	fromSrv, srvOut := io.Pipe()
	c := &acpClient{toSrv: toSrv, done: make(chan int, 1)}
	go func() {
		code := Main(args, srvIn, srvOut, io.Discard)
		srvOut.Close()
		c.done <- code
	}()
	c.conn = acp.NewClientSideConnection(allowingClient{}, toSrv, fromSrv)
	c.conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := c.conn.Initialize(context.Background(), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		b.Fatal(err)
	}
	return c
}

func (c *acpClient) turn(b *testing.B, ws string) {
	ctx := context.Background()
	sess, err := c.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}})
	if err != nil {
		b.Fatal(err)
	}
	resp, err := c.conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock(benchPrompt)}})
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		b.Fatalf("prompt: %v, %v", resp.StopReason, err)
	}
}

func (c *acpClient) close() {
	c.toSrv.Close()
	if code := <-c.done; code != ExitOK {
		panic(fmt.Sprintf("tally acp exited %d", code))
	}
}

// allowingClient approves every permission request once and ignores the
// updates, as a fast editor would.
type allowingClient struct{}

func (allowingClient) SessionUpdate(context.Context, acp.SessionNotification) error { return nil }

func (allowingClient) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
		Selected: &acp.RequestPermissionOutcomeSelected{OptionId: "allow_once"}}}, nil
}

func (allowingClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (allowingClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

func (allowingClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (allowingClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (allowingClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (allowingClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (allowingClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}
