package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/workbench"
)

// session is one Tally session open on the connection.
type session struct {
	srv  *Server
	id   string
	ws   string
	sess *agent.Session
	// noModel is why turns cannot run (no endpoint configured), for a
	// session loaded only to be read; nil when they can.
	noModel error
	// idle holds one token while no prompt runs: a prompt takes it, so
	// prompts of one session run one after the other.
	idle chan struct{}

	mu       sync.Mutex
	calls    map[string]*callInfo // the tool calls announced to the client
	streamed bool                 // text or reasoning streamed since the last assistant message
	stop     context.CancelFunc   // cancels the running prompt; nil when none runs
	closed   bool
	sendErr  bool                          // a failed update was logged
	msgID    string                        // the assistant message being streamed (see messageID)
	forms    map[string]context.CancelFunc // the forms asked of the client, by engine form ID
}

// options is the session's workbench configuration with the server's
// approver and event sink.
func (st *session) options(id string) workbench.SessionOptions {
	var so workbench.SessionOptions
	if st.srv.o.Session != nil {
		so = st.srv.o.Session(id)
	}
	so.ID = id
	so.Approver = &approver{st: st}
	so.OnEvent = st.event
	forms, pages := st.srv.offered()
	so.Forms = forms || pages // the MCP servers' forms and pages go to the client as elicitation/create
	so.Editor = editor{st}
	so.PrepareSnapshots = true // the turn's first command finds the workspace listed
	return so
}

// attach binds the opened engine session.
func (st *session) attach(sess *agent.Session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sess = sess
	st.id = sess.Snapshot().Meta.ID
	st.ws = sess.Snapshot().Meta.Workspace
}

// ready reports whether the session is attached; events before that (its
// servers starting) are not sent.
func (st *session) ready() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sess != nil && !st.closed
}

// modes is the session's permission modes as ACP session modes; full-auto
// only where commands can be sandboxed.
func (st *session) modes() *acp.SessionModeState {
	perm := st.sess.Permissions()
	out := &acp.SessionModeState{CurrentModeId: acp.SessionModeId(perm.Mode())}
	for _, m := range tool.Modes {
		if m == tool.ModeFullAuto && !perm.Sandboxed() {
			continue
		}
		out.AvailableModes = append(out.AvailableModes, acp.SessionMode{
			Id: acp.SessionModeId(m), Name: m.Label(), Description: acp.Ptr(capitalize(m.Explain()) + "."),
		})
	}
	return out
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// send delivers one update to the client. A failure (the client is gone)
// is logged once; the turn goes on and is saved.
func (st *session) send(u acp.SessionUpdate) {
	err := st.srv.conn.SessionUpdate(context.Background(), acp.SessionNotification{SessionId: acp.SessionId(st.id), Update: u})
	if err == nil {
		return
	}
	st.mu.Lock()
	logged := st.sendErr
	st.sendErr = true
	st.mu.Unlock()
	if !logged {
		st.srv.logf("session %s: an update could not be sent (%s); the turn goes on and is saved", st.id, sentence(err.Error()))
	}
}

// prompt runs one turn with the client's content blocks.
func (st *session) prompt(ctx context.Context, blocks []acp.ContentBlock) (acp.PromptResponse, error) {
	text, imgs, err := promptText(blocks, st.ws)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	if strings.TrimSpace(text) == "" && len(imgs) == 0 {
		return acp.PromptResponse{}, &acp.RequestError{Code: codeInvalidParams, Message: "the prompt is empty; type what you want the agent to do"}
	}
	select {
	case <-st.idle: // an earlier prompt (cancelled by this one) has ended
	case <-ctx.Done():
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	defer func() { st.idle <- struct{}{} }()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return acp.PromptResponse{}, failuref("session %s was closed; load it again", st.id)
	}
	st.stop = stop
	st.streamed = false
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		st.stop = nil
		st.mu.Unlock()
	}()
	if inv, ok, perr := command.ParseAction(text); ok {
		return st.action(ctx, inv, perr)
	}
	if st.noModel != nil {
		return acp.PromptResponse{}, failure(st.noModel)
	}
	title := st.sess.Snapshot().Meta.Title
	res, err := st.sess.RunWithImages(ctx, text, imgs)
	if t := st.sess.Snapshot().Meta.Title; t != title && t != "" {
		st.send(acp.SessionUpdate{SessionInfoUpdate: &acp.SessionSessionInfoUpdate{Title: acp.Ptr(t)}})
	}
	switch {
	case ctx.Err() != nil || res.Reason == step.ReasonCancelled:
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case res.Reason == step.ReasonStepLimit:
		return acp.PromptResponse{StopReason: acp.StopReasonMaxTurnRequests}, nil
	case errors.Is(err, agent.ErrBusy):
		return acp.PromptResponse{}, failuref("a turn is already running in session %s (in another Tally); wait for it and send the prompt again", st.id)
	case err != nil:
		return acp.PromptResponse{}, failure(err)
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// cancel stops the running prompt, if any.
func (st *session) cancel() {
	st.mu.Lock()
	stop := st.stop
	st.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// close cancels the running prompt, waits for it to end and closes the
// engine session.
func (st *session) close() {
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return
	}
	st.closed = true
	stop := st.stop
	st.mu.Unlock()
	if stop != nil {
		stop()
	}
	<-st.idle // the turn has ended
	if st.sess != nil {
		st.sess.Close()
	}
	st.idle <- struct{}{}
}

// commandsLater sends the context level and cost, then the commands,
// once the answer that opened the session has been written to the
// client, which only then knows the session; listing the commands may
// wait a few seconds for a slow MCP server.
func (st *session) commandsLater() {
	if st.srv.ledger == nil { // no connection: nobody to tell
		return
	}
	st.srv.ledger.afterOpened(st.sessionID(), func() {
		st.sendUsage()
		st.sendCommands()
	})
}

// sendCommands tells the client the session's slash commands: the
// built-in ones, the user's and the workspace's command files and the MCP
// servers' prompts.
func (st *session) sendCommands() {
	if !st.ready() {
		return
	}
	cmds := st.sess.Commands().List(context.Background())
	out := make([]acp.AvailableCommand, 0, len(cmds))
	for _, c := range cmds {
		if c.Problem != "" {
			continue // a command file that cannot be used now
		}
		ac := acp.AvailableCommand{Name: c.Name, Description: c.Description}
		if ac.Description == "" {
			ac.Description = fmt.Sprintf("/%s (%s)", c.Name, c.Source)
		}
		if c.Hint != "" {
			ac.Input = &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: c.Hint}}
		}
		out = append(out, ac)
	}
	st.send(acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{AvailableCommands: out}})
}

// editorWait bounds each file-system request to the client: one that does
// not answer in time is read from, or left to, the disk, so a stalled
// editor cannot hold up a turn (the edit preview asks it too, outside the
// turn's context).
const editorWait = 5 * time.Second

// editor is the client as the session's tool.Editor, for the file-system
// methods it offered at initialize: fs/read_text_file gives the file
// tools its buffers (unsaved changes included), fs/write_text_file shows
// it what they wrote. A client that offers neither is not asked.
type editor struct{ st *session }

// ReadText asks the client for the text of abs.
func (e editor) ReadText(ctx context.Context, abs string) (string, bool) {
	srv := e.st.srv
	srv.mu.Lock()
	can := srv.client.Fs.ReadTextFile
	srv.mu.Unlock()
	if !can || srv.conn == nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, editorWait)
	defer cancel()
	resp, err := srv.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: acp.SessionId(e.st.sessionID()), Path: abs})
	if err != nil {
		return "", false // read from disk, as without an editor
	}
	return resp.Content, true
}

// WroteText shows the client the new text of abs.
func (e editor) WroteText(ctx context.Context, abs, text string) {
	srv := e.st.srv
	srv.mu.Lock()
	can := srv.client.Fs.WriteTextFile
	srv.mu.Unlock()
	if !can || srv.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, editorWait)
	defer cancel()
	_, _ = srv.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: acp.SessionId(e.st.sessionID()), Path: abs, Content: text})
}

// sessionID is the session's ID once attached.
func (st *session) sessionID() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.id
}
