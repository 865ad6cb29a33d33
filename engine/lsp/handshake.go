package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/tally-dev/tally/internal/text"
)

// clientName is the client name sent in initialize.
const clientName = "tally"

// initializeParams builds the initialize request: the workspace as root
// and only folder, and the capabilities Tally uses (full-text sync with
// saves, versioned diagnostics, plain-text or Markdown hover, links for
// definitions, hierarchical document symbols, workspace symbols). The
// process ID is left null for a confined server (see
// initializeParams.ProcessID).
func (s *server) initializeParams() initializeParams {
	root := fileURI(s.m.real)
	p := initializeParams{
		ClientInfo: &clientInfo{Name: clientName},
		RootURI:    root,
		Capabilities: clientCapabilities{
			Workspace: &workspaceClientCapabilities{
				Configuration: true, WorkspaceFolders: true,
				Symbol: &workspaceSymbolClientCapabilities{},
			},
			TextDocument: &textDocumentClientCapabilities{
				Synchronization:    &textDocumentSyncClientCapabilities{DidSave: true},
				Hover:              &hoverClientCapabilities{ContentFormat: []markupKind{markupKindPlainText, markupKindMarkdown}},
				Definition:         &definitionClientCapabilities{LinkSupport: true},
				References:         &referenceClientCapabilities{},
				DocumentSymbol:     &documentSymbolClientCapabilities{HierarchicalDocumentSymbolSupport: true},
				PublishDiagnostics: &publishDiagnosticsClientCapabilities{VersionSupport: true},
			},
		},
		WorkspaceFolders: []workspaceFolder{{URI: root, Name: filepath.Base(s.m.real)}},
	}
	if len(s.cfg.InitOptions) > 0 {
		p.InitializationOptions = s.cfg.InitOptions
	}
	if s.m.opts.Confine == nil {
		pid := int32(os.Getpid())
		p.ProcessID = &pid
	}
	return p
}

// initializeResult is the part of the answer to initialize Tally reads;
// the capabilities are read leniently (see parseCapabilities).
type initializeResult struct {
	Capabilities json.RawMessage `json:"capabilities"`
}

// capabilities are the server capabilities Tally acts on.
type capabilities struct {
	save, saveText                        bool
	definition, references, hover, symbol bool
	workspaceSymbol                       bool
}

// parseCapabilities reads the capabilities a server announced; a field
// of an unexpected shape counts as absent.
func parseCapabilities(raw json.RawMessage) capabilities {
	var c struct {
		TextDocumentSync        json.RawMessage `json:"textDocumentSync"`
		DefinitionProvider      json.RawMessage `json:"definitionProvider"`
		ReferencesProvider      json.RawMessage `json:"referencesProvider"`
		HoverProvider           json.RawMessage `json:"hoverProvider"`
		DocumentSymbolProvider  json.RawMessage `json:"documentSymbolProvider"`
		WorkspaceSymbolProvider json.RawMessage `json:"workspaceSymbolProvider"`
	}
	var out capabilities
	if json.Unmarshal(raw, &c) != nil {
		return out
	}
	out.definition = provided(c.DefinitionProvider)
	out.references = provided(c.ReferencesProvider)
	out.hover = provided(c.HoverProvider)
	out.symbol = provided(c.DocumentSymbolProvider)
	out.workspaceSymbol = provided(c.WorkspaceSymbolProvider)
	var sync struct {
		Save json.RawMessage `json:"save"`
	}
	if json.Unmarshal(c.TextDocumentSync, &sync) == nil && provided(sync.Save) {
		out.save = true
		var opts struct {
			IncludeText bool `json:"includeText"`
		}
		out.saveText = json.Unmarshal(sync.Save, &opts) == nil && opts.IncludeText
	}
	return out
}

// provided reports whether a provider capability is true or an options
// object.
func provided(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t == "true" || strings.HasPrefix(t, "{")
}

// handler takes what a server sends on its own: diagnostics, log
// messages and requests. It runs on the connection's reading goroutine,
// so it never blocks: replies are written from goroutines of their own.
type handler struct {
	s *server
	c *conn
}

// maxDiagnostics bounds the diagnostics kept for one file.
const maxDiagnostics = 1000

func (h *handler) Handle(_ context.Context, rc *jsonrpc2.Conn, req *jsonrpc2.Request) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	switch req.Method {
	case "textDocument/publishDiagnostics":
		h.s.published(h.c, params)
		return
	case "window/logMessage", "window/showMessage":
		var msg struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(params, &msg) == nil {
			h.s.log.Note(req.Method + ": " + text.ClipBytes(msg.Message, 4096))
		}
	}
	if req.Notif {
		return
	}
	var result any
	var rpcErr *jsonrpc2.Error
	switch req.Method {
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		result = make([]any, len(p.Items))
	case "workspace/workspaceFolders":
		result = []workspaceFolder{{URI: fileURI(h.s.m.real), Name: filepath.Base(h.s.m.real)}}
	case "workspace/applyEdit":
		result = map[string]any{"applied": false, "failureReason": "Tally does not apply edits a language server asks for"}
	case "window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability",
		"window/showMessageRequest", "window/showDocument", "workspace/semanticTokens/refresh",
		"workspace/codeLens/refresh", "workspace/inlayHint/refresh", "workspace/diagnostic/refresh":
		result = nil
	default:
		rpcErr = &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "Tally does not handle " + text.ClipBytes(req.Method, 100)}
	}
	id := req.ID
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), h.s.m.opts.RequestTimeout)
		defer cancel()
		if rpcErr != nil {
			_ = rc.ReplyWithError(ctx, id, rpcErr)
			return
		}
		_ = rc.Reply(ctx, id, result)
	}()
}

// published is one file's diagnostics as a server last published them.
type published struct {
	version int32 // 0 when the server did not say
	at      time.Time
	items   []diagnostic
}

// published records a publishDiagnostics notification of c; one for a
// file outside the workspace, or that cannot be read, is ignored, and so
// is each diagnostic of an unexpected shape.
func (s *server) published(c *conn, params json.RawMessage) {
	var p struct {
		URI         string            `json:"uri"`
		Version     *int32            `json:"version"`
		Diagnostics []json.RawMessage `json:"diagnostics"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	path := uriPath(p.URI)
	if path == "" {
		return
	}
	rel, ok := s.m.relOf(path)
	if !ok {
		return
	}
	pub := &published{at: time.Now()}
	if p.Version != nil {
		pub.version = *p.Version
	}
	for _, raw := range p.Diagnostics {
		if len(pub.items) == maxDiagnostics {
			break
		}
		var d diagnostic
		if json.Unmarshal(raw, &d) == nil {
			pub.items = append(pub.items, d)
		}
	}
	s.mu.Lock()
	c.diags[rel] = pub
	c.lastPublish = pub.at
	s.mu.Unlock()
	s.m.notify()
}
