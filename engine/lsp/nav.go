package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tally-dev/tally/internal/safefile"
	"github.com/tally-dev/tally/internal/text"
)

// Limits of navigation results.
const (
	// MaxExcerpt bounds a location's excerpt, in characters.
	MaxExcerpt = 200
	// MaxHover bounds a hover text, in bytes.
	MaxHover = 4000
	// maxResults bounds the locations and symbols kept from one answer.
	maxResults = 1000
)

// Location is a place in a file that a server pointed to.
type Location struct {
	// Path is workspace-relative and slash-separated, or absolute when
	// Outside is set (a definition in the standard library, say).
	Path string
	// Line and Column are 1-based; Column counts characters.
	Line, Column int
	// Excerpt is the source line there, trimmed and on one line, at
	// most MaxExcerpt characters; "" outside the workspace, whose files
	// are never read.
	Excerpt string
	// Outside reports a file outside the workspace.
	Outside bool
}

// String is "path:line: excerpt", or "path:line" without an excerpt.
func (l Location) String() string {
	if l.Excerpt == "" {
		return fmt.Sprintf("%s:%d", l.Path, l.Line)
	}
	return fmt.Sprintf("%s:%d: %s", l.Path, l.Line, l.Excerpt)
}

// Symbol is a named thing a server found: a function, a type, a field.
type Symbol struct {
	// Name is the symbol's name; Kind its kind in lower case
	// ("function", "struct", "method"); Detail what the server adds (a
	// signature), "" when nothing; Container the enclosing symbol's name,
	// "" at the top.
	Name, Kind, Detail, Container string
	// Location is where it is declared (its name, where the server says).
	Location
}

// navigation is a resolved position request: the server chosen, its
// connection, and the position in protocol form.
type navigation struct {
	s   *server
	c   *conn
	rel string
	pos textDocumentPositionParams
}

// at prepares a request about line:column of path to the first server
// handling it that is up and offers the feature (checked by has).
func (m *Manager) at(ctx context.Context, path string, line, column int, feature string, has func(capabilities) bool) (*navigation, error) {
	if line < 1 || column < 1 {
		return nil, fmt.Errorf("line %d, column %d is not a position; lines and columns count from 1", line, column)
	}
	n, err := m.document(ctx, path, feature, has)
	if err != nil {
		return nil, err
	}
	d, _ := m.doc(n.rel)
	lt, ok := lineAt(d.text, line-1)
	if !ok {
		return nil, fmt.Errorf("%s has no line %d (it has %d); give a line inside the file", n.rel, line, strings.Count(d.text, "\n")+1)
	}
	n.pos = textDocumentPositionParams{
		TextDocument: textDocumentIdentifier{URI: fileURI(m.abs(n.rel))},
		Position:     position{Line: uint32(line - 1), Character: uint32(utf16Offset(lt, column))},
	}
	return n, nil
}

// document syncs path and returns the first server handling it that is
// running, has been sent the file and offers the feature.
func (m *Manager) document(ctx context.Context, path, feature string, has func(capabilities) bool) (*navigation, error) {
	if err := m.usable(); err != nil {
		return nil, err
	}
	rels, err := m.sync(ctx, []string{path})
	if err != nil {
		return nil, err
	}
	rel := rels[0]
	if d, ok := m.doc(rel); !ok || d.deleted {
		return nil, fmt.Errorf("the file %s does not exist; give an existing file", rel)
	}
	servers := m.serversFor(rel)
	if len(servers) == 0 {
		return nil, fmt.Errorf("no language server is configured for %s; add one for its extension to the language-server file (%s)", rel, FileName)
	}
	var errs []string
	for _, s := range servers {
		c, err := s.connFor(ctx, rel)
		switch {
		case err != nil:
			errs = append(errs, err.Error())
		case !has(c.caps):
			errs = append(errs, fmt.Sprintf("the language server %q does not offer %s", s.cfg.Name, feature))
		default:
			return &navigation{s: s, c: c, rel: rel}, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.New(strings.Join(errs, "; "))
}

// Definition returns where the symbol at line:column (1-based) of path is
// defined. It syncs the file first, starts its server when needed and
// waits at most StartTimeout for the start and RequestTimeout for the
// answer. Path is absolute or workspace-relative; one outside the
// workspace is refused.
func (m *Manager) Definition(ctx context.Context, path string, line, column int) ([]Location, error) {
	n, err := m.at(ctx, path, line, column, "definitions", func(c capabilities) bool { return c.definition })
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := n.s.request(ctx, n.c, "textDocument/definition", definitionParams{n.pos}, &raw); err != nil {
		return nil, n.s.answerErr(err)
	}
	return m.locations(parseLocations(raw)), nil
}

// References returns every reference to the symbol at line:column of
// path, its declaration included, sorted by path and position; see
// [Manager.Definition] for the waits.
func (m *Manager) References(ctx context.Context, path string, line, column int) ([]Location, error) {
	n, err := m.at(ctx, path, line, column, "references", func(c capabilities) bool { return c.references })
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	params := referenceParams{textDocumentPositionParams: n.pos, Context: referenceContext{IncludeDeclaration: true}}
	if err := n.s.request(ctx, n.c, "textDocument/references", params, &raw); err != nil {
		return nil, n.s.answerErr(err)
	}
	locs := m.locations(parseLocations(raw))
	slices.SortFunc(locs, func(a, b Location) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return slices.CompactFunc(locs, func(a, b Location) bool {
		return a.Path == b.Path && a.Line == b.Line && a.Column == b.Column
	}), nil
}

// Hover returns the server's description of the symbol at line:column of
// path (its type, signature and documentation) as text, at most MaxHover
// bytes; "" when the server has nothing to say. See [Manager.Definition]
// for the waits.
func (m *Manager) Hover(ctx context.Context, path string, line, column int) (string, error) {
	n, err := m.at(ctx, path, line, column, "hover", func(c capabilities) bool { return c.hover })
	if err != nil {
		return "", err
	}
	var h struct {
		Contents json.RawMessage `json:"contents"`
	}
	if err := n.s.request(ctx, n.c, "textDocument/hover", hoverParams{n.pos}, &h); err != nil {
		return "", n.s.answerErr(err)
	}
	return text.ClipBytes(strings.TrimSpace(hoverText(h.Contents)), MaxHover), nil
}

// DocumentSymbols returns the symbols declared in path, in the server's
// order, nested ones after their container; see [Manager.Definition] for
// the waits.
func (m *Manager) DocumentSymbols(ctx context.Context, path string) ([]Symbol, error) {
	n, err := m.document(ctx, path, "document symbols", func(c capabilities) bool { return c.symbol })
	if err != nil {
		return nil, err
	}
	var raw []json.RawMessage
	params := documentSymbolParams{TextDocument: textDocumentIdentifier{URI: fileURI(m.abs(n.rel))}}
	if err := n.s.request(ctx, n.c, "textDocument/documentSymbol", params, &raw); err != nil {
		return nil, n.s.answerErr(err)
	}
	var out []Symbol
	for _, r := range raw {
		out = appendSymbols(out, r, m.abs(n.rel), "", 0)
	}
	return m.symbols(out), nil
}

// WorkspaceSymbols returns the symbols whose names match query in the
// whole workspace, from every server that is running or, when none is,
// from the available ones (see [Manager.Available]), which are started.
// Each server is waited for at most StartTimeout and RequestTimeout; one
// that fails is left out unless all do.
func (m *Manager) WorkspaceSymbols(ctx context.Context, query string) ([]Symbol, error) {
	if err := m.usable(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("no query was given; give a symbol name or part of one")
	}
	var servers []*server
	for _, s := range m.servers {
		if s.live() != nil {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		for _, sc := range m.Available() {
			i := slices.IndexFunc(m.servers, func(s *server) bool { return s.cfg.Name == sc.Name })
			servers = append(servers, m.servers[i])
		}
	}
	if len(servers) == 0 {
		return nil, errors.New("no language server is available for this workspace's files; run `tally lsp status` to see why")
	}
	var out []Symbol
	var errs []string
	for _, s := range servers {
		c, err := s.connFor(ctx, "")
		if err == nil && !c.caps.workspaceSymbol {
			err = fmt.Errorf("the language server %q does not offer workspace symbols", s.cfg.Name)
		}
		var raw []json.RawMessage
		if err == nil {
			if err = s.request(ctx, c, "workspace/symbol", workspaceSymbolParams{Query: query}, &raw); err != nil {
				err = s.answerErr(err)
			}
		}
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		for _, r := range raw {
			out = appendSymbols(out, r, "", "", 0)
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return m.symbols(out), nil
}

// answerErr turns a failed request into one sentence.
func (s *server) answerErr(err error) error {
	if errors.Is(err, errGone) {
		return fmt.Errorf("the language server %q stopped during the request; try again", s.cfg.Name)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("the language server %q failed the request: %w; try again or check its log", s.cfg.Name, err)
}

// rawLocation is a Location or a LocationLink of a server's answer.
type rawLocation struct {
	URI                  string     `json:"uri"`
	Range                *textRange `json:"range"`
	TargetURI            string     `json:"targetUri"`
	TargetSelectionRange *textRange `json:"targetSelectionRange"`
	TargetRange          *textRange `json:"targetRange"`
}

// parseLocations reads an answer that is a location, a list of locations
// or of location links, or null, into (absolute path, position) pairs;
// entries of another shape are skipped.
func parseLocations(raw json.RawMessage) []absLocation {
	var list []json.RawMessage
	t := strings.TrimSpace(string(raw))
	switch {
	case strings.HasPrefix(t, "["):
		if json.Unmarshal(raw, &list) != nil {
			return nil
		}
	case strings.HasPrefix(t, "{"):
		list = []json.RawMessage{raw}
	}
	var out []absLocation
	for _, r := range list {
		if len(out) == maxResults {
			break
		}
		var l rawLocation
		if json.Unmarshal(r, &l) != nil {
			continue
		}
		uri, rg := l.URI, l.Range
		if l.TargetURI != "" {
			uri, rg = l.TargetURI, cmp.Or(l.TargetSelectionRange, l.TargetRange)
		}
		if p := uriPath(uri); p != "" {
			a := absLocation{path: p}
			if rg != nil {
				a.pos = rg.Start
			}
			out = append(out, a)
		}
	}
	return out
}

// absLocation is a position in the file at an absolute path.
type absLocation struct {
	path string
	pos  position
}

// locations turns positions into Locations with excerpts, reading each
// workspace file at most once.
func (m *Manager) locations(ls []absLocation) []Location {
	lines := m.lineReader()
	out := make([]Location, 0, len(ls))
	for _, l := range ls {
		out = append(out, lines(l.path, l.pos))
	}
	return out
}

// lineReader returns a function that locates a position of a file,
// caching the files it reads.
func (m *Manager) lineReader() func(path string, pos position) Location {
	texts := map[string]string{}
	return func(path string, pos position) Location {
		rel, ok := m.relOf(path)
		if !ok {
			return Location{Path: path, Line: int(pos.Line) + 1, Column: int(pos.Character) + 1, Outside: true}
		}
		content, seen := texts[rel]
		if !seen {
			if d, ok := m.doc(rel); ok && !d.deleted {
				content = d.text
			} else if data, truncated, err := safefile.ReadIn(m.root, rel, MaxFileSize); err == nil && !truncated {
				content = string(data)
			}
			texts[rel] = content
		}
		lt, _ := lineAt(content, int(pos.Line))
		return Location{
			Path: rel, Line: int(pos.Line) + 1, Column: runeColumn(lt, int(pos.Character)),
			Excerpt: text.OneLine(lt, MaxExcerpt),
		}
	}
}

// rawSymbol is a DocumentSymbol, a SymbolInformation or a
// WorkspaceSymbol of a server's answer.
type rawSymbol struct {
	Name           string            `json:"name"`
	Kind           symbolKind        `json:"kind"`
	Detail         string            `json:"detail"`
	ContainerName  string            `json:"containerName"`
	SelectionRange *textRange        `json:"selectionRange"`
	Range          *textRange        `json:"range"`
	Location       *rawLocation      `json:"location"`
	Children       []json.RawMessage `json:"children"`
}

// maxSymbolDepth bounds the nesting of document symbols that is read.
const maxSymbolDepth = 8

// appendSymbols appends the symbol of raw (and its children) to out;
// file is the document's path for document symbols, "" when the symbol
// carries its own location.
func appendSymbols(out []Symbol, raw json.RawMessage, file, container string, depth int) []Symbol {
	var r rawSymbol
	if len(out) >= maxResults || depth > maxSymbolDepth || json.Unmarshal(raw, &r) != nil || r.Name == "" {
		return out
	}
	path, rg := file, cmp.Or(r.SelectionRange, r.Range)
	if r.Location != nil {
		path, rg = uriPath(r.Location.URI), r.Location.Range
	}
	if path == "" {
		return out
	}
	sym := Symbol{Name: text.OneLine(r.Name, 200), Kind: r.Kind.String(), Detail: text.OneLine(r.Detail, 200),
		Container: text.OneLine(cmp.Or(r.ContainerName, container), 200), Location: Location{Path: path}}
	if rg != nil {
		sym.Line, sym.Column = int(rg.Start.Line), int(rg.Start.Character)
	}
	out = append(out, sym)
	for _, ch := range r.Children {
		out = appendSymbols(out, ch, file, r.Name, depth+1)
	}
	return out
}

// symbols fills in the symbols' locations (they hold absolute paths and
// 0-based positions until now).
func (m *Manager) symbols(syms []Symbol) []Symbol {
	lines := m.lineReader()
	for i, s := range syms {
		loc := lines(s.Path, position{Line: uint32(s.Line), Character: uint32(s.Column)})
		syms[i].Location = loc
	}
	return syms
}

// hoverText reads a hover's contents: markup content, a marked string
// (plain or with a language) or a list of marked strings.
func hoverText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Kind     string `json:"kind"`
		Value    string `json:"value"`
		Language string `json:"language"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Value != "" {
		if obj.Language != "" {
			return "```" + obj.Language + "\n" + obj.Value + "\n```"
		}
		return obj.Value
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		parts := make([]string, 0, len(list))
		for _, item := range list {
			if t := strings.TrimSpace(hoverText(item)); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n\n")
	}
	return ""
}
