package lsp

// The Language Server Protocol messages Tally sends and reads, as the
// LSP 3.17 specification names them, with only the fields Tally uses:
// a field the specification makes optional has omitempty, a required
// one never does. The types are the package's own (not exported: the
// package's API is Tally's Diagnostic, Location and Symbol); answers of
// many shapes (locations, symbols, hover contents, capabilities) are
// read leniently where they are used, from json.RawMessage.

// initializeParams are the parameters of the initialize request
// (InitializeParams).
type initializeParams struct {
	// ProcessID is the ID of the process that started the server, which
	// exits when it is gone; nil (sent as null) for a confined server,
	// which runs in a PID namespace of its own, where Tally's process ID
	// names nobody, or somebody else.
	ProcessID *int32 `json:"processId"`
	// ClientInfo names the client.
	ClientInfo *clientInfo `json:"clientInfo,omitempty"`
	// RootURI is the workspace folder's URI, the root that servers
	// predating workspace folders read (the specification deprecates it
	// in favour of WorkspaceFolders, but it is still required, and may
	// be null).
	RootURI string `json:"rootUri"`
	// InitializationOptions are the server's own options, as the
	// configuration gives them.
	InitializationOptions any `json:"initializationOptions,omitempty"`
	// Capabilities are what the client supports.
	Capabilities clientCapabilities `json:"capabilities"`
	// WorkspaceFolders are the workspace's folders: Tally's one.
	WorkspaceFolders []workspaceFolder `json:"workspaceFolders,omitempty"`
}

// clientInfo names the client in initialize (the clientInfo of
// InitializeParams).
type clientInfo struct {
	// Name is the client's name.
	Name string `json:"name"`
}

// clientCapabilities are the capabilities the client announces
// (ClientCapabilities).
type clientCapabilities struct {
	// Workspace are the workspace-wide capabilities.
	Workspace *workspaceClientCapabilities `json:"workspace,omitempty"`
	// TextDocument are the capabilities of text document requests.
	TextDocument *textDocumentClientCapabilities `json:"textDocument,omitempty"`
}

// workspaceClientCapabilities are the client's workspace-wide
// capabilities (the workspace of ClientCapabilities).
type workspaceClientCapabilities struct {
	// Symbol says the client sends workspace/symbol requests.
	Symbol *workspaceSymbolClientCapabilities `json:"symbol,omitempty"`
	// WorkspaceFolders says the client answers workspace/workspaceFolders.
	WorkspaceFolders bool `json:"workspaceFolders,omitempty"`
	// Configuration says the client answers workspace/configuration.
	Configuration bool `json:"configuration,omitempty"`
}

// workspaceSymbolClientCapabilities are the client's capabilities for
// workspace/symbol (WorkspaceSymbolClientCapabilities); Tally sets none
// of the optional ones.
type workspaceSymbolClientCapabilities struct{}

// textDocumentClientCapabilities are the client's capabilities for text
// document requests and notifications (TextDocumentClientCapabilities).
type textDocumentClientCapabilities struct {
	// Synchronization are the capabilities of document syncing.
	Synchronization *textDocumentSyncClientCapabilities `json:"synchronization,omitempty"`
	// Hover are those of textDocument/hover.
	Hover *hoverClientCapabilities `json:"hover,omitempty"`
	// Definition are those of textDocument/definition.
	Definition *definitionClientCapabilities `json:"definition,omitempty"`
	// References are those of textDocument/references.
	References *referenceClientCapabilities `json:"references,omitempty"`
	// DocumentSymbol are those of textDocument/documentSymbol.
	DocumentSymbol *documentSymbolClientCapabilities `json:"documentSymbol,omitempty"`
	// PublishDiagnostics are those of textDocument/publishDiagnostics.
	PublishDiagnostics *publishDiagnosticsClientCapabilities `json:"publishDiagnostics,omitempty"`
}

// textDocumentSyncClientCapabilities are the client's capabilities of
// document syncing (TextDocumentSyncClientCapabilities).
type textDocumentSyncClientCapabilities struct {
	// DidSave says the client sends didSave notifications.
	DidSave bool `json:"didSave,omitempty"`
}

// hoverClientCapabilities are the client's capabilities for
// textDocument/hover (HoverClientCapabilities).
type hoverClientCapabilities struct {
	// ContentFormat are the formats of hover contents the client reads,
	// the preferred first.
	ContentFormat []markupKind `json:"contentFormat,omitempty"`
}

// markupKind is the format of markup content (MarkupKind).
type markupKind string

// The markup kinds.
const (
	// markupKindPlainText is plain text.
	markupKindPlainText markupKind = "plaintext"
	// markupKindMarkdown is Markdown.
	markupKindMarkdown markupKind = "markdown"
)

// definitionClientCapabilities are the client's capabilities for
// textDocument/definition (DefinitionClientCapabilities).
type definitionClientCapabilities struct {
	// LinkSupport says the client reads LocationLinks as answers.
	LinkSupport bool `json:"linkSupport,omitempty"`
}

// referenceClientCapabilities are the client's capabilities for
// textDocument/references (ReferenceClientCapabilities); Tally sets none
// of the optional ones.
type referenceClientCapabilities struct{}

// documentSymbolClientCapabilities are the client's capabilities for
// textDocument/documentSymbol (DocumentSymbolClientCapabilities).
type documentSymbolClientCapabilities struct {
	// HierarchicalDocumentSymbolSupport says the client reads nested
	// DocumentSymbols as answers.
	HierarchicalDocumentSymbolSupport bool `json:"hierarchicalDocumentSymbolSupport,omitempty"`
}

// publishDiagnosticsClientCapabilities are the client's capabilities for
// textDocument/publishDiagnostics (PublishDiagnosticsClientCapabilities).
type publishDiagnosticsClientCapabilities struct {
	// VersionSupport says the client reads the document version
	// diagnostics are for.
	VersionSupport bool `json:"versionSupport,omitempty"`
}

// workspaceFolder is a folder of the workspace (WorkspaceFolder).
type workspaceFolder struct {
	// URI is the folder's URI.
	URI string `json:"uri"`
	// Name is the folder's name in the user interface.
	Name string `json:"name"`
}

// textDocumentIdentifier names a text document
// (TextDocumentIdentifier).
type textDocumentIdentifier struct {
	// URI is the document's file URI.
	URI string `json:"uri"`
}

// versionedTextDocumentIdentifier names a version of a text document
// (VersionedTextDocumentIdentifier).
type versionedTextDocumentIdentifier struct {
	// URI is the document's file URI.
	URI string `json:"uri"`
	// Version is the document's version after the change; it counts up.
	Version int32 `json:"version"`
}

// textDocumentItem is a document opened on the server, with its content
// (TextDocumentItem).
type textDocumentItem struct {
	// URI is the document's file URI.
	URI string `json:"uri"`
	// LanguageID is the document's language identifier ("go",
	// "typescriptreact").
	LanguageID string `json:"languageId"`
	// Version is the document's version; it counts up.
	Version int32 `json:"version"`
	// Text is the document's content.
	Text string `json:"text"`
}

// didOpenTextDocumentParams are the parameters of textDocument/didOpen
// (DidOpenTextDocumentParams).
type didOpenTextDocumentParams struct {
	// TextDocument is the document opened.
	TextDocument textDocumentItem `json:"textDocument"`
}

// didChangeTextDocumentParams are the parameters of
// textDocument/didChange (DidChangeTextDocumentParams).
type didChangeTextDocumentParams struct {
	// TextDocument is the document changed, at its new version.
	TextDocument versionedTextDocumentIdentifier `json:"textDocument"`
	// ContentChanges are the changes, applied in order.
	ContentChanges []textDocumentContentChangeEvent `json:"contentChanges"`
}

// textDocumentContentChangeEvent is a change of a document's content in
// its whole-document form, without a range: the text replaces the whole
// document (TextDocumentContentChangeEvent; Tally syncs full text only).
type textDocumentContentChangeEvent struct {
	// Text is the document's new content.
	Text string `json:"text"`
}

// didSaveTextDocumentParams are the parameters of textDocument/didSave
// (DidSaveTextDocumentParams).
type didSaveTextDocumentParams struct {
	// TextDocument is the document saved.
	TextDocument textDocumentIdentifier `json:"textDocument"`
	// Text is the content when saved, sent only to a server that asked
	// for it (includeText); nil otherwise.
	Text *string `json:"text,omitempty"`
}

// didCloseTextDocumentParams are the parameters of textDocument/didClose
// (DidCloseTextDocumentParams).
type didCloseTextDocumentParams struct {
	// TextDocument is the document closed.
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// position is a place in a document (Position): a 0-based line and a
// 0-based offset on it in UTF-16 code units, the encoding every server
// supports.
type position struct {
	// Line is the 0-based line.
	Line uint32 `json:"line"`
	// Character is the 0-based offset on the line, in UTF-16 code units.
	Character uint32 `json:"character"`
}

// textRange is a stretch of a document between two positions, the end
// exclusive (Range; range is a Go keyword).
type textRange struct {
	// Start is where it starts.
	Start position `json:"start"`
	// End is where it ends, exclusive.
	End position `json:"end"`
}

// textDocumentPositionParams name a position in a document
// (TextDocumentPositionParams); the position requests embed them.
type textDocumentPositionParams struct {
	// TextDocument is the document.
	TextDocument textDocumentIdentifier `json:"textDocument"`
	// Position is the position in it.
	Position position `json:"position"`
}

// definitionParams are the parameters of textDocument/definition
// (DefinitionParams).
type definitionParams struct {
	textDocumentPositionParams
}

// referenceParams are the parameters of textDocument/references
// (ReferenceParams).
type referenceParams struct {
	textDocumentPositionParams
	// Context says what to include.
	Context referenceContext `json:"context"`
}

// referenceContext says what textDocument/references includes
// (ReferenceContext).
type referenceContext struct {
	// IncludeDeclaration includes the symbol's declaration.
	IncludeDeclaration bool `json:"includeDeclaration"`
}

// hoverParams are the parameters of textDocument/hover (HoverParams).
type hoverParams struct {
	textDocumentPositionParams
}

// documentSymbolParams are the parameters of textDocument/documentSymbol
// (DocumentSymbolParams).
type documentSymbolParams struct {
	// TextDocument is the document whose symbols are asked for.
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// workspaceSymbolParams are the parameters of workspace/symbol
// (WorkspaceSymbolParams).
type workspaceSymbolParams struct {
	// Query is what the symbols' names match; the server decides how.
	Query string `json:"query"`
}

// diagnostic is one problem a server published for a document
// (Diagnostic), before it becomes a Tally [Diagnostic].
type diagnostic struct {
	// Range is where the problem is.
	Range textRange `json:"range"`
	// Severity is how bad it is; 0 when the server said nothing.
	Severity diagnosticSeverity `json:"severity,omitempty"`
	// Code is the problem's code, an integer (decoded as float64) or a
	// string; nil when none.
	Code any `json:"code,omitempty"`
	// Source names the tool that found it ("compiler"); "" when none.
	Source string `json:"source,omitempty"`
	// Message is the problem's description.
	Message string `json:"message"`
}

// diagnosticSeverity is how bad a diagnostic is (DiagnosticSeverity).
type diagnosticSeverity int

// The diagnostic severities.
const (
	// diagnosticSeverityError is an error.
	diagnosticSeverityError diagnosticSeverity = 1
	// diagnosticSeverityWarning is a warning.
	diagnosticSeverityWarning diagnosticSeverity = 2
	// diagnosticSeverityInformation is information.
	diagnosticSeverityInformation diagnosticSeverity = 3
	// diagnosticSeverityHint is a hint.
	diagnosticSeverityHint diagnosticSeverity = 4
)

// symbolKind is the kind of a symbol (SymbolKind).
type symbolKind int

// The symbol kinds, numbered as the specification numbers them.
const (
	symbolKindFile symbolKind = iota + 1
	symbolKindModule
	symbolKindNamespace
	symbolKindPackage
	symbolKindClass
	symbolKindMethod
	symbolKindProperty
	symbolKindField
	symbolKindConstructor
	symbolKindEnum
	symbolKindInterface
	symbolKindFunction
	symbolKindVariable
	symbolKindConstant
	symbolKindString
	symbolKindNumber
	symbolKindBoolean
	symbolKindArray
	symbolKindObject
	symbolKindKey
	symbolKindNull
	symbolKindEnumMember
	symbolKindStruct
	symbolKindEvent
	symbolKindOperator
	symbolKindTypeParameter
)

// symbolKindNames are the lower-case names of the symbol kinds.
var symbolKindNames = [...]string{
	symbolKindFile: "file", symbolKindModule: "module", symbolKindNamespace: "namespace",
	symbolKindPackage: "package", symbolKindClass: "class", symbolKindMethod: "method",
	symbolKindProperty: "property", symbolKindField: "field", symbolKindConstructor: "constructor",
	symbolKindEnum: "enum", symbolKindInterface: "interface", symbolKindFunction: "function",
	symbolKindVariable: "variable", symbolKindConstant: "constant", symbolKindString: "string",
	symbolKindNumber: "number", symbolKindBoolean: "boolean", symbolKindArray: "array",
	symbolKindObject: "object", symbolKindKey: "key", symbolKindNull: "null",
	symbolKindEnumMember: "enum member", symbolKindStruct: "struct", symbolKindEvent: "event",
	symbolKindOperator: "operator", symbolKindTypeParameter: "type parameter",
}

// String is the kind's lower-case name ("enum member"), or "symbol" for
// a kind the specification does not define.
func (k symbolKind) String() string {
	if k < symbolKindFile || k > symbolKindTypeParameter {
		return "symbol"
	}
	return symbolKindNames[k]
}
