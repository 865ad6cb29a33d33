package lsp

import (
	"encoding/json"
	"testing"
)

// TestProtocolWire holds Tally's LSP types to the JSON the specification
// names: required fields always sent (processId as null, rootUri),
// optional ones left out when empty, the didChange change event without
// a range, and didSave's text sent, even empty, only when asked for.
func TestProtocolWire(t *testing.T) {
	empty := ""
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"initialize, confined", initializeParams{RootURI: "file:///w"},
			`{"processId":null,"rootUri":"file:///w","capabilities":{}}`},
		{"capabilities", clientCapabilities{
			Workspace:    &workspaceClientCapabilities{Symbol: &workspaceSymbolClientCapabilities{}, Configuration: true},
			TextDocument: &textDocumentClientCapabilities{Hover: &hoverClientCapabilities{ContentFormat: []markupKind{markupKindPlainText, markupKindMarkdown}}},
		}, `{"workspace":{"symbol":{},"configuration":true},"textDocument":{"hover":{"contentFormat":["plaintext","markdown"]}}}`},
		{"didChange", didChangeTextDocumentParams{
			TextDocument:   versionedTextDocumentIdentifier{URI: "file:///w/a.go", Version: 2},
			ContentChanges: []textDocumentContentChangeEvent{{Text: "package a\n"}},
		}, `{"textDocument":{"uri":"file:///w/a.go","version":2},"contentChanges":[{"text":"package a\n"}]}`},
		{"didSave without text", didSaveTextDocumentParams{TextDocument: textDocumentIdentifier{URI: "file:///w/a.go"}},
			`{"textDocument":{"uri":"file:///w/a.go"}}`},
		{"didSave with empty text", didSaveTextDocumentParams{TextDocument: textDocumentIdentifier{URI: "file:///w/a.go"}, Text: &empty},
			`{"textDocument":{"uri":"file:///w/a.go"},"text":""}`},
		{"references", referenceParams{
			textDocumentPositionParams: textDocumentPositionParams{
				TextDocument: textDocumentIdentifier{URI: "file:///w/a.go"}, Position: position{Line: 3, Character: 7}},
			Context: referenceContext{IncludeDeclaration: true},
		}, `{"textDocument":{"uri":"file:///w/a.go"},"position":{"line":3,"character":7},"context":{"includeDeclaration":true}}`},
	} {
		got, err := json.Marshal(tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}

	var d diagnostic
	raw := `{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":5}},"severity":2,"code":"E1","source":"vet","message":"m","tags":[1],"data":{}}`
	if err := json.Unmarshal([]byte(raw), &d); err != nil || d.Range.Start != (position{1, 2}) || d.Range.End != (position{1, 5}) ||
		severity(d.Severity) != "warning" || code(d.Code) != "E1" || d.Source != "vet" || d.Message != "m" {
		t.Errorf("diagnostic = %+v, %v", d, err)
	}

	for k, want := range map[symbolKind]string{0: "symbol", symbolKindFile: "file", symbolKindEnumMember: "enum member",
		symbolKindTypeParameter: "type parameter", 27: "symbol", -1: "symbol"} {
		if got := k.String(); got != want {
			t.Errorf("symbolKind(%d) = %q, want %q", int(k), got, want)
		}
	}
}
