package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/text"
)

// Annotations are the hints a server gives about one of its tools. They
// are hints only: Tally trusts ReadOnly only for servers the user allowed
// (see [Tool.NeedsApproval]).
type Annotations struct {
	// Title is a human-readable name, "" when none.
	Title string
	// ReadOnly: the tool does not change its environment.
	ReadOnly bool
	// Destructive: the tool may delete or overwrite (true when unsaid).
	Destructive bool
	// Idempotent: repeating a call has no further effect.
	Idempotent bool
	// OpenWorld: the tool reaches outside systems (true when unsaid).
	OpenWorld bool
}

// toolInfo is what Tally keeps of a listed tool.
type toolInfo struct {
	Name        string
	Title       string
	Description string
	InputSchema any
	Annotations Annotations
}

func infoOf(t *sdk.Tool) toolInfo {
	info := toolInfo{
		Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
		Annotations: Annotations{Destructive: true, OpenWorld: true},
	}
	if a := t.Annotations; a != nil {
		info.Annotations.Title = a.Title
		info.Annotations.ReadOnly = a.ReadOnlyHint
		info.Annotations.Idempotent = a.IdempotentHint
		if a.DestructiveHint != nil {
			info.Annotations.Destructive = *a.DestructiveHint
		}
		if a.OpenWorldHint != nil {
			info.Annotations.OpenWorld = *a.OpenWorldHint
		}
		if info.Title == "" {
			info.Title = a.Title
		}
	}
	if info.Annotations.ReadOnly {
		info.Annotations.Destructive = false
	}
	return info
}

// Tool is one tool of an MCP server, offered to the model as
// mcp__<server>__<tool>. It implements [tool.Tool]; its Spec never changes
// once made, and Run always returns a Result, never panics and never waits
// longer than the server's timeout.
type Tool struct {
	srv     *server
	remote  string
	spec    tool.Spec
	ann     Annotations
	wrapped bool
	tokens  int
}

func newTool(s *server, info toolInfo, count func(string) int) *Tool {
	schema, wrapped := objectSchema(info.InputSchema)
	t := &Tool{
		srv:    s,
		remote: info.Name,
		spec: tool.Spec{
			Name:        ToolName(s.name, info.Name),
			Description: description(s.name, info),
			Parameters:  schema,
		},
		ann:     info.Annotations,
		wrapped: wrapped,
	}
	t.tokens = specTokens(t.spec, count)
	return t
}

// specTokens counts the tokens of a spec as it is sent: its JSON.
func specTokens(s tool.Spec, count func(string) int) int {
	data, err := json.Marshal(s)
	if err != nil {
		return 0
	}
	return count(string(data))
}

// Spec implements [tool.Tool].
func (t *Tool) Spec() tool.Spec {
	s := t.spec
	s.Parameters = bytes.Clone(s.Parameters)
	return s
}

// NeedsApproval implements [tool.Tool]: true unless the server annotates
// the tool as read-only and the user allowed that server's read-only tools
// ("allowReadOnly" in its configuration, or [Manager.SetAllowReadOnly]).
func (t *Tool) NeedsApproval() bool {
	return !(t.ann.ReadOnly && t.srv.allowsReadOnly())
}

// Effect tells the approval gate that the call acts through the server,
// not as a command Tally runs: "Always allow" is offered even where
// commands are not sandboxed, and auto-edit mode still asks.
func (t *Tool) Effect() tool.Effect { return tool.EffectExternal }

// Server returns the name of the tool's server.
func (t *Tool) Server() string { return t.srv.name }

// RemoteName returns the tool's own name on its server.
func (t *Tool) RemoteName() string { return t.remote }

// Annotations returns the server's hints about the tool.
func (t *Tool) Annotations() Annotations { return t.ann }

// Tokens returns the tokens the tool's spec takes in the catalog.
func (t *Tool) Tokens() int { return t.tokens }

// Run implements [tool.Tool]: it calls the tool on its server, restarting
// a crashed server once, within the server's per-call timeout.
func (t *Tool) Run(ctx context.Context, _ *tool.Env, args json.RawMessage) (res tool.Result) {
	name := t.spec.Name
	defer func() {
		if p := recover(); p != nil {
			res = errResult(name, fmt.Errorf("the MCP client failed unexpectedly (%v); try again or continue without this tool", p))
		}
	}()
	arguments, err := t.arguments(args)
	if err != nil {
		return errResult(name, err)
	}
	cs, gen, err := t.srv.session(ctx)
	if err != nil {
		return errResult(name, err)
	}
	// The timeout pauses while a form of the server waits for the user.
	cctx, done := t.srv.startCall(ctx)
	defer done()
	params := &sdk.CallToolParams{Name: t.remote, Arguments: arguments}
	out, err := cs.CallTool(cctx, params)
	if again, perr := t.srv.pagesFirst(cctx, cs, err); perr != nil {
		return errResult(name, perr)
	} else if again {
		out, err = cs.CallTool(cctx, params)
	}
	if err != nil {
		return errResult(name, t.callError(ctx, cctx, gen, err))
	}
	if out == nil {
		return errResult(name, fmt.Errorf("the MCP server %q returned an empty result; try again or continue without this tool", t.srv.name))
	}
	return convertResult(out)
}

// arguments decodes the model's arguments, unwrapping "input" for a tool
// whose schema had to be wrapped.
func (t *Tool) arguments(args json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if !t.wrapped {
		if !json.Valid(args) {
			return nil, errors.New("the arguments are not valid JSON; send one JSON object")
		}
		return json.RawMessage(args), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, fmt.Errorf("the arguments are not a JSON object (%w); send {%q: ...}", err, wrapKey)
	}
	in, ok := m[wrapKey]
	if !ok {
		return nil, fmt.Errorf("the argument %q is missing; send {%q: ...}", wrapKey, wrapKey)
	}
	return in, nil
}

// callError explains a failed call, recording a crash when the connection
// is gone.
func (t *Tool) callError(ctx, cctx context.Context, gen int, err error) error {
	s := t.srv
	switch {
	case ctx.Err() != nil:
		return errors.New("the call was cancelled before the MCP server answered")
	case s.signInNeeded():
		err := s.signInError()
		s.setState(StateSignIn, err.Error())
		return fmt.Errorf("%w; tell the user, and continue without its tools until then", err)
	case errors.Is(context.Cause(cctx), context.DeadlineExceeded):
		s.log.Note(fmt.Sprintf("call to %s timed out after %s", t.remote, s.cfg.CallTimeout()))
		return fmt.Errorf("the MCP server %q did not answer within %s; try again later or continue without this tool", s.name, s.cfg.CallTimeout())
	case isClosed(err):
		s.ended(gen, text.OneLine(err.Error(), 200))
		st := s.status()
		if st.State == StateCrashed {
			return fmt.Errorf("the MCP server %q stopped during the call; it will be restarted on the next call, so retry once if the call is safe to repeat", s.name)
		}
		return fmt.Errorf("the MCP server %q stopped during the call and will not be restarted again; continue without its tools and tell the user", s.name)
	}
	detail := text.OneLine(err.Error(), 300)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == codeRejected {
		// The request could not be sent: the server is gone or
		// unreachable, so the next call reconnects, once.
		s.ended(gen, detail)
		if s.status().State == StateCrashed {
			return fmt.Errorf("the MCP server %q could not be reached (%s); it will be reconnected on the next call, so retry once", s.name, detail)
		}
		return fmt.Errorf("the MCP server %q could not be reached (%s); continue without its tools and tell the user", s.name, detail)
	}
	switch {
	case isMalformed(err):
		return fmt.Errorf("the MCP server %q returned malformed data (%s); continue without this tool and tell the user", s.name, detail)
	case errors.As(err, &rpcErr):
		return fmt.Errorf("the MCP server %q refused the call (%s); check the arguments against the tool's schema", s.name, text.OneLine(rpcErr.Message, 300))
	case s.status().State == StateCrashed:
		return fmt.Errorf("the MCP server %q stopped (%s); it will be restarted on the next call, so retry once if the call is safe to repeat", s.name, detail)
	}
	return fmt.Errorf("the MCP server %q could not be reached (%s); try again later or continue without this tool", s.name, detail)
}

// isMalformed reports whether err is a failure to decode the server's
// answer.
func isMalformed(err error) bool {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	if errors.As(err, &typeErr) || errors.As(err, &syntaxErr) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "cannot unmarshal") || strings.Contains(msg, "invalid character") ||
		strings.Contains(msg, "unexpected end of JSON")
}

// JSON-RPC codes the SDK's own connection uses (its internal jsonrpc2
// package): the client or the server is closing, or the transport refused
// to send. They are not answers from the server.
const (
	codeClientClosing = -32003
	codeServerClosing = -32004
	codeRejected      = -32005
)

// isClosed reports whether err means the connection to the server is gone.
func isClosed(err error) bool {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && (rpcErr.Code == codeClientClosing || rpcErr.Code == codeServerClosing) {
		return true
	}
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe)
}

// convertResult turns a server's result into a tool.Result: text content
// joined by newlines; images, audio and resources summarised in one line
// each (an embedded text resource keeps its text after its line);
// structured content as JSON text unless a text block already holds the
// same JSON; isError kept.
func convertResult(r *sdk.CallToolResult) tool.Result {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, contentText(c))
	}
	if r.StructuredContent != nil {
		if data, err := json.Marshal(r.StructuredContent); err == nil && !holdsJSON(parts, data) {
			parts = append(parts, string(data))
		}
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		if r.IsError {
			text = "the MCP tool reported an error without a message"
		} else {
			text = "(the MCP tool returned no content)"
		}
	}
	return tool.Result{Content: text, IsError: r.IsError}
}

func contentText(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data))
	case *sdk.ResourceLink:
		line := "[resource link " + c.URI
		if c.Name != "" {
			line += " (" + text.OneLine(c.Name, 100) + ")"
		}
		if c.MIMEType != "" {
			line += ", " + c.MIMEType
		}
		return line + "]"
	case *sdk.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[empty resource]"
		}
		if r.Text != "" {
			return fmt.Sprintf("[resource %s, %s]\n%s", r.URI, orUnknown(r.MIMEType), r.Text)
		}
		return fmt.Sprintf("[resource %s, %s, %d bytes, not shown]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	case nil:
		return ""
	}
	return fmt.Sprintf("[content of kind %T, not shown]", c)
}

func orUnknown(mime string) string {
	if mime == "" {
		return "of unknown type"
	}
	return mime
}

// holdsJSON reports whether one of the text parts is the same JSON value
// as data.
func holdsJSON(parts []string, data []byte) bool {
	var want any
	if json.Unmarshal(data, &want) != nil {
		return false
	}
	norm, _ := json.Marshal(want)
	for _, p := range parts {
		var got any
		if json.Unmarshal([]byte(p), &got) != nil {
			continue
		}
		if g, _ := json.Marshal(got); bytes.Equal(g, norm) {
			return true
		}
	}
	return false
}

// errResult builds an error Result prefixed with the tool name, like the
// built-in tools' errors.
func errResult(name string, err error) tool.Result {
	return tool.Result{Content: name + ": " + err.Error(), IsError: true}
}
