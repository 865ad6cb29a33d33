package acp

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/demo/demoserver"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/sandbox"
)

// The test binary doubles as the sandbox helper, as the tally binary does.
func TestMain(m *testing.M) { sandbox.RunTests(m) }

// fixture is a data directory, a demo workspace and the scripted model.
type fixture struct {
	data, ws string
	model    *llmtest.Server
	// buffers, when not nil, are the editor's open files: the client
	// then offers fs/read_text_file and fs/write_text_file.
	buffers map[string]string
	// vision makes sessions take their model to accept images.
	vision bool
	// forms makes the client offer form elicitation, pages URL-mode
	// elicitation; fetchLocal lets web_fetch reach loopback pages.
	forms, pages, fetchLocal bool
	// network is Options.Network.
	network string
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, demoserver.Script(0)) }

// newFixtureWith is a fixture whose model follows script.
func newFixtureWith(t *testing.T, script llmtest.Script) *fixture {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "sk-test")
	f := &fixture{data: t.TempDir(), ws: t.TempDir(), model: llmtest.New(script)}
	t.Cleanup(f.model.Close)
	if err := demo.NewWorkspace(f.ws); err != nil {
		t.Fatal(err)
	}
	return f
}

// client records what the agent sends and answers its permission
// requests with answer (nil: allow once).
type client struct {
	mu      sync.Mutex
	updates []acp.SessionUpdate
	asked   []acp.RequestPermissionRequest
	answer  func(acp.RequestPermissionRequest) acp.RequestPermissionResponse
	// buffers are the editor's open files, by absolute path, for a
	// client that offers the file-system methods; wrote records what the
	// agent wrote through them.
	buffers, wrote map[string]string
	// forms records the elicitations asked; elicit answers them (nil:
	// decline).
	forms  []acp.UnstableCreateElicitationRequest
	elicit func(acp.UnstableCreateElicitationRequest) acp.UnstableCreateElicitationResponse
}

func (c *client) UnstableCreateElicitation(_ context.Context, p acp.UnstableCreateElicitationRequest) (acp.UnstableCreateElicitationResponse, error) {
	c.mu.Lock()
	c.forms = append(c.forms, p)
	elicit := c.elicit
	c.mu.Unlock()
	if elicit == nil {
		return acp.UnstableCreateElicitationResponse{Decline: &acp.UnstableCreateElicitationDecline{Action: "decline"}}, nil
	}
	return elicit(p), nil
}

func (c *client) UnstableCompleteElicitation(context.Context, acp.UnstableCompleteElicitationNotification) error {
	return nil
}

func (c *client) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n.Update)
	return nil
}

func (c *client) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, p)
	answer := c.answer
	c.mu.Unlock()
	if answer != nil {
		return answer(p), nil
	}
	return selected(optionAllow), nil
}

func selected(id string) acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
		Selected: &acp.RequestPermissionOutcomeSelected{OptionId: acp.PermissionOptionId(id)}}}
}

// take returns the updates so far and forgets them.
func (c *client) take() []acp.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.updates
	c.updates = nil
	return out
}

func (c *client) permissions() []acp.RequestPermissionRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acp.RequestPermissionRequest(nil), c.asked...)
}

func (c *client) ReadTextFile(_ context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if text, ok := c.buffers[p.Path]; ok {
		return acp.ReadTextFileResponse{Content: text}, nil
	}
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (c *client) WriteTextFile(_ context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buffers == nil {
		return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
	}
	c.buffers[p.Path] = p.Content
	c.wrote[p.Path] = p.Content
	return acp.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content), 0o644) // saved, as an editor does
}

func (*client) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (*client) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (*client) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (*client) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (*client) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// harness is one connection: the server on one side of two pipes, the
// SDK's client on the other.
type harness struct {
	conn   *acp.ClientSideConnection
	client *client
	toSrv  *io.PipeWriter
	done   chan struct{}
}

// connect serves f over pipes, with mode for new sessions ("" for the
// default), and initializes the connection.
func (f *fixture) connect(t *testing.T, mode tool.Mode) *harness {
	t.Helper()
	srvIn, toSrv := io.Pipe()
	fromSrv, srvOut := io.Pipe()
	h := &harness{client: &client{buffers: f.buffers, wrote: map[string]string{}}, toSrv: toSrv, done: make(chan struct{})}
	opts := Options{
		Open: func() (*workbench.Workbench, error) {
			w, _, err := workbench.Open(f.data, os.Getenv)
			return w, err
		},
		Session: func(string) workbench.SessionOptions {
			return workbench.SessionOptions{Flags: workbench.Flags{BaseURL: f.model.URL(), Model: "deepseek-chat"}, Mode: mode, Vision: f.vision}
		},
		Log:        io.Discard,
		FetchLocal: f.fetchLocal,
		Network:    f.network,
	}
	go func() {
		defer close(h.done)
		Serve(context.Background(), srvIn, srvOut, opts)
		srvOut.Close()
	}()
	h.conn = acp.NewClientSideConnection(h.client, toSrv, fromSrv)
	h.conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(h.close)
	caps := acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{ReadTextFile: f.buffers != nil, WriteTextFile: f.buffers != nil}}
	if f.forms || f.pages {
		caps.Elicitation = &acp.ElicitationCapabilities{}
	}
	if f.forms {
		caps.Elicitation.Form = &acp.ElicitationFormCapabilities{}
	}
	if f.pages {
		caps.Elicitation.Url = &acp.ElicitationUrlCapabilities{}
	}
	if _, err := h.conn.Initialize(ctx(t), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		t.Fatal(err)
	}
	return h
}

// close ends the connection and waits for the server to shut down.
func (h *harness) close() {
	h.toSrv.Close()
	select {
	case <-h.done:
	case <-time.After(20 * time.Second):
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func (f *fixture) newSession(t *testing.T, h *harness) acp.NewSessionResponse {
	t.Helper()
	resp, err := h.conn.NewSession(ctx(t), acp.NewSessionRequest{Cwd: f.ws, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func prompt(t *testing.T, h *harness, id acp.SessionId, text string) acp.PromptResponse {
	t.Helper()
	resp, err := h.conn.Prompt(ctx(t), acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (f *fixture) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.ws, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
