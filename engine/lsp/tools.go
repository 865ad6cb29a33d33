package lsp

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/text"
)

// MaxToolLocations is the number of locations or symbols a tool result
// lists; the rest are counted in a closing line.
const MaxToolLocations = 50

// The tools' descriptions, one embedded file a tool, and their schemas
// never change while Tally runs, so their Spec bytes stay the same and the
// prompt cache keeps hitting.
var (
	//go:embed lsp_definition.md
	definitionDoc string
	//go:embed lsp_references.md
	referencesDoc string
	//go:embed lsp_hover.md
	hoverDoc string
	//go:embed lsp_symbols.md
	symbolsDoc string
)

// The tools' schemas.
const (
	positionSchema = `{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "File path relative to the workspace root."},
			"line": {"type": "integer", "minimum": 1, "description": "1-based line of the symbol."},
			"symbol": {"type": "string", "description": "The symbol's name as written on that line; its first occurrence is used. Give this or column."},
			"column": {"type": "integer", "minimum": 1, "description": "1-based column (in characters) inside the symbol. Give this or symbol."}
		},
		"required": ["path", "line"],
		"additionalProperties": false
	}`
	symbolsSchema = `{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "File whose symbols to list, relative to the workspace root."},
			"query": {"type": "string", "description": "Name or part of a name to search in the whole workspace."}
		},
		"additionalProperties": false
	}`
)

// compactSchema compacts a schema literal of this file; the literals are
// valid JSON, which the tests check.
func compactSchema(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b.Bytes()
}

var (
	definitionSpec = tool.Spec{Name: "lsp_definition", Description: strings.TrimSpace(definitionDoc), Parameters: compactSchema(positionSchema)}
	referencesSpec = tool.Spec{Name: "lsp_references", Description: strings.TrimSpace(referencesDoc), Parameters: compactSchema(positionSchema)}
	hoverSpec      = tool.Spec{Name: "lsp_hover", Description: strings.TrimSpace(hoverDoc), Parameters: compactSchema(positionSchema)}
	symbolsSpec    = tool.Spec{Name: "lsp_symbols", Description: strings.TrimSpace(symbolsDoc), Parameters: compactSchema(symbolsSchema)}
)

// Tools returns the model-facing tools of m, in a fixed order:
// lsp_definition, lsp_references, lsp_symbols and lsp_hover. They only
// read (NeedsApproval is false), their Specs never change, every call
// returns within the manager's bounded waits, and failures come back as
// an error Result of one sentence. Paths are confined to m's workspace;
// the Env of a call is not consulted.
func Tools(m *Manager) []tool.Tool {
	return []tool.Tool{
		positionTool{m: m, spec: definitionSpec, run: runDefinition},
		positionTool{m: m, spec: referencesSpec, run: runReferences},
		symbolsTool{m: m},
		positionTool{m: m, spec: hoverSpec, run: runHover},
	}
}

// positionParams are the arguments of the tools about one position.
type positionParams struct {
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Symbol string `json:"symbol,omitempty"`
	Column int    `json:"column,omitempty"`
}

// positionTool is lsp_definition, lsp_references or lsp_hover.
type positionTool struct {
	m    *Manager
	spec tool.Spec
	run  func(ctx context.Context, m *Manager, rel string, line, col int) (string, error)
}

func (t positionTool) Spec() tool.Spec     { return t.spec }
func (t positionTool) NeedsApproval() bool { return false }

func (t positionTool) Run(ctx context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	name := t.spec.Name
	var p positionParams
	if err := tool.DecodeArgs(args, &p); err != nil {
		return failed(name, err)
	}
	if p.Path == "" || p.Line < 1 {
		return failed(name, fmt.Errorf("path and a line of at least 1 are required; give the file and the symbol's line"))
	}
	rel, err := t.m.rel(p.Path)
	if err != nil {
		return failed(name, err)
	}
	col := p.Column
	if col < 1 {
		if col, err = t.m.columnOf(ctx, rel, p.Line, p.Symbol); err != nil {
			return failed(name, err)
		}
	}
	out, err := t.run(ctx, t.m, rel, p.Line, col)
	if err != nil {
		return failed(name, err)
	}
	return tool.Result{Content: out, Paths: []string{rel}}
}

func runDefinition(ctx context.Context, m *Manager, rel string, line, col int) (string, error) {
	locs, err := m.Definition(ctx, rel, line, col)
	if err != nil {
		return "", err
	}
	if len(locs) == 0 {
		return fmt.Sprintf("no definition found for %s:%d:%d; check that the position is on a symbol's name", rel, line, col), nil
	}
	return listLocations(locs), nil
}

func runReferences(ctx context.Context, m *Manager, rel string, line, col int) (string, error) {
	locs, err := m.References(ctx, rel, line, col)
	if err != nil {
		return "", err
	}
	if len(locs) == 0 {
		return fmt.Sprintf("no references found for %s:%d:%d; check that the position is on a symbol's name", rel, line, col), nil
	}
	return listLocations(locs), nil
}

func runHover(ctx context.Context, m *Manager, rel string, line, col int) (string, error) {
	h, err := m.Hover(ctx, rel, line, col)
	if err != nil {
		return "", err
	}
	d, _ := m.doc(rel)
	lt, _ := lineAt(d.text, line-1)
	here := Location{Path: rel, Line: line, Excerpt: text.OneLine(lt, MaxExcerpt)}
	if h == "" {
		return here.String() + "\n(the language server has no information about this position)", nil
	}
	return here.String() + "\n" + h, nil
}

// listLocations writes locations one a line, capped.
func listLocations(locs []Location) string {
	var b strings.Builder
	for i, l := range locs {
		if i == MaxToolLocations {
			fmt.Fprintf(&b, "(%d more omitted)\n", len(locs)-i)
			break
		}
		b.WriteString(l.String())
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// symbolsParams are the arguments of lsp_symbols.
type symbolsParams struct {
	Path  string `json:"path,omitempty"`
	Query string `json:"query,omitempty"`
}

// symbolsTool is lsp_symbols.
type symbolsTool struct{ m *Manager }

func (symbolsTool) Spec() tool.Spec     { return symbolsSpec }
func (symbolsTool) NeedsApproval() bool { return false }

func (t symbolsTool) Run(ctx context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	name := symbolsSpec.Name
	var p symbolsParams
	if err := tool.DecodeArgs(args, &p); err != nil {
		return failed(name, err)
	}
	var syms []Symbol
	var err error
	var paths []string
	switch {
	case (p.Path == "") == (p.Query == ""):
		return failed(name, fmt.Errorf("give either path (the symbols of one file) or query (a search in the workspace), not both or neither"))
	case p.Path != "":
		var rel string
		if rel, err = t.m.rel(p.Path); err == nil {
			paths = []string{rel}
			syms, err = t.m.DocumentSymbols(ctx, rel)
		}
	default:
		syms, err = t.m.WorkspaceSymbols(ctx, p.Query)
	}
	if err != nil {
		return failed(name, err)
	}
	if len(syms) == 0 {
		return tool.Result{Content: "no symbols found", Paths: paths}
	}
	var b strings.Builder
	for i, s := range syms {
		if i == MaxToolLocations {
			fmt.Fprintf(&b, "(%d more omitted)\n", len(syms)-i)
			break
		}
		label := s.Name
		if s.Container != "" {
			label = s.Container + "." + s.Name
		}
		fmt.Fprintf(&b, "%s (%s %s)\n", s.Location.String(), s.Kind, label)
	}
	return tool.Result{Content: strings.TrimSuffix(b.String(), "\n"), Paths: paths}
}

// failed is an error Result prefixed with the tool's name.
func failed(name string, err error) tool.Result {
	return tool.Result{Content: name + ": " + err.Error(), IsError: true}
}

// columnOf returns the 1-based column of the first whole-word occurrence
// of symbol on line of the file rel, after syncing it.
func (m *Manager) columnOf(ctx context.Context, rel string, line int, symbol string) (int, error) {
	if symbol == "" {
		return 0, fmt.Errorf("give the symbol's name on line %d (symbol) or its column (column)", line)
	}
	if _, err := m.sync(ctx, []string{rel}); err != nil {
		return 0, err
	}
	d, ok := m.doc(rel)
	if !ok || d.deleted {
		return 0, fmt.Errorf("the file %s does not exist; give an existing file", rel)
	}
	lt, ok := lineAt(d.text, line-1)
	if !ok {
		return 0, fmt.Errorf("%s has no line %d; give a line inside the file", rel, line)
	}
	for from := 0; from < len(lt); {
		i := strings.Index(lt[from:], symbol)
		if i < 0 {
			break
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(lt[:i])
		after, _ := utf8.DecodeRuneInString(lt[i+len(symbol):])
		if (i == 0 || !isIdent(before)) && (i+len(symbol) == len(lt) || !isIdent(after)) {
			if dot := strings.LastIndexByte(symbol, '.'); dot >= 0 {
				i += dot + 1 // pkg.Func and obj.method mean the last name
			}
			return utf8.RuneCountInString(lt[:i]) + 1, nil
		}
		from = i + 1
	}
	return 0, fmt.Errorf("%q does not occur on line %d of %s, which reads %q; give the name as written there, or its column", symbol, line, rel, text.OneLine(lt, 120))
}

func isIdent(r rune) bool { return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r) }
