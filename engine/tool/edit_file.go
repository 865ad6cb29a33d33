package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tally-dev/tally/internal/text"
)

//go:embed edit_file.md
var editFileDoc string

// EditFileParams are the arguments of edit_file.
type EditFileParams struct {
	// Path is the file to edit, relative to the workspace root.
	Path string `json:"path"`
	// OldString is the exact text to replace; it must not be empty.
	OldString string `json:"old_string"`
	// NewString is the replacement; empty deletes OldString.
	NewString string `json:"new_string"`
	// ReplaceAll replaces every occurrence instead of requiring exactly
	// one.
	ReplaceAll bool `json:"replace_all,omitempty"`
}

// EditFileMaxSize is the size above which edit_file refuses a file.
const EditFileMaxSize = 8 << 20

var editFileSpec = Spec{
	Name:        "edit_file",
	Description: strings.TrimSpace(editFileDoc),
	Parameters: schema(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "File path relative to the workspace root."},
			"old_string": {"type": "string", "description": "Exact text to replace, including indentation and line breaks."},
			"new_string": {"type": "string", "description": "Replacement text; empty deletes old_string."},
			"replace_all": {"type": "boolean", "description": "Replace every occurrence instead of exactly one. Default false."}
		},
		"required": ["path", "old_string", "new_string"],
		"additionalProperties": false
	}`),
}

type editFile struct{}

// EditFile returns the edit_file tool: it replaces exact text in a workspace
// file, requiring a unique match unless replace_all is set, writes the file
// atomically and reports the changed line ranges. It needs approval.
func EditFile() Tool { return editFile{} }

func (editFile) Spec() Spec          { return editFileSpec }
func (editFile) NeedsApproval() bool { return true }

// editPlan is an edit_file call worked out but not written: the file's
// content before and after, and where the replacements land.
type editPlan struct {
	w          *wsRoot // the caller closes it
	rel, fname string
	before     []byte
	updated    string
	starts     []int
	newS       string
}

// plan decodes and checks an edit_file call and computes the new content,
// or returns the failure for the model.
func (editFile) plan(ctx context.Context, env *Env, args json.RawMessage) (*editPlan, *Result) {
	const name = "edit_file"
	fail := func(r Result) (*editPlan, *Result) { return nil, &r }
	var p EditFileParams
	if err := decodeParams(name, args, &p); err != nil {
		return fail(errResult(name, err))
	}
	if p.Path == "" {
		return fail(errorf(name, "path is missing; pass the file path relative to the workspace root"))
	}
	if p.OldString == "" {
		return fail(errorf(name, "old_string is empty for %q; pass the exact text to replace, or use write_file to create a file", p.Path))
	}
	if p.OldString == p.NewString {
		return fail(errorf(name, "old_string and new_string are identical for %q; pass the changed text in new_string", p.Path))
	}
	w, err := openWorkspace(env, p.Path)
	if err != nil {
		return fail(errResult(name, err))
	}
	pl, r := editFile{}.planIn(ctx, env, w, p)
	if r != nil {
		w.Close()
	}
	return pl, r
}

func (editFile) planIn(ctx context.Context, env *Env, w *wsRoot, p EditFileParams) (*editPlan, *Result) {
	const name = "edit_file"
	fail := func(r Result) (*editPlan, *Result) { return nil, &r }
	rel, fname, err := w.confine(p.Path)
	if err != nil {
		return fail(errResult(name, err))
	}
	fi, used, err := w.stat(fname)
	if err != nil {
		return fail(errorf(name, "%s", describeStatError(rel, err)))
	}
	if fi.IsDir() {
		return fail(errorf(name, "%q is a directory; pass a file path", rel))
	}
	if !fi.Mode().IsRegular() {
		return fail(errorf(name, "%q is not a regular file; only regular text files can be edited", rel))
	}
	if fi.Size() > EditFileMaxSize {
		return fail(errorf(name, "%q is %s bytes, over the %s-byte limit for editing; use run_shell with a tool such as sed instead", rel, text.Thousands(int(fi.Size())), text.Thousands(EditFileMaxSize)))
	}
	if what, secret := w.secretPath(env, rel, fname); secret && !secretReadAllowed(ctx) {
		return fail(refuseSecret(name, what, "edited", "edit"))
	}
	data, err := w.readRegular(used, fi, EditFileMaxSize)
	if errors.Is(err, errTooBig) {
		return fail(errorf(name, "%q grew over the %s-byte limit for editing; use run_shell with a tool such as sed instead", rel, text.Thousands(EditFileMaxSize)))
	}
	if err != nil {
		return fail(errorf(name, "%s", describeStatError(rel, err)))
	}
	if looksBinary(data, true) {
		return fail(errorf(name, "%q is a binary file; only text files can be edited", rel))
	}
	if txt, ok := env.editorText(ctx, rel); ok && len(txt) <= EditFileMaxSize {
		data = []byte(txt) // the editor's buffer, unsaved changes included: the edit keeps them
	}
	content := string(data)
	oldS, newS := p.OldString, p.NewString

	count := strings.Count(content, oldS)
	if count == 0 && strings.Contains(content, "\r\n") && strings.Contains(oldS, "\n") && !strings.Contains(oldS, "\r\n") {
		// The file uses CRLF line endings, which read_file does not show.
		crlfOld := strings.ReplaceAll(oldS, "\n", "\r\n")
		if c := strings.Count(content, crlfOld); c > 0 {
			oldS, newS, count = crlfOld, strings.ReplaceAll(newS, "\n", "\r\n"), c
		}
	}
	switch {
	case count == 0:
		if line, ok := fuzzyLine(content, oldS); ok {
			return fail(errorf(name, "old_string not found in %q, but text differing only in whitespace starts at line %d; read the file and copy the exact text, including indentation and line breaks", rel, line))
		}
		return fail(errorf(name, "old_string not found in %q; read the file and copy the exact text", rel))
	case count > 1 && !p.ReplaceAll:
		return fail(errorf(name, "old_string occurs %d times in %q (at lines %s); add surrounding lines to make it unique, or set replace_all to true to change all of them", count, rel, matchLines(content, oldS, 10)))
	}

	// Replace and record where each replacement lands in the new content.
	var b strings.Builder
	b.Grow(len(content) + count*(len(newS)-len(oldS)))
	var starts []int
	rest := content
	for {
		i := strings.Index(rest, oldS)
		if i < 0 || (!p.ReplaceAll && len(starts) == 1) {
			break
		}
		b.WriteString(rest[:i])
		starts = append(starts, b.Len())
		b.WriteString(newS)
		rest = rest[i+len(oldS):]
	}
	b.WriteString(rest)
	return &editPlan{w: w, rel: rel, fname: fname, before: data, updated: b.String(), starts: starts, newS: newS}, nil
}

func (t editFile) propose(ctx context.Context, env *Env, args json.RawMessage) (proposal, error) {
	pl, fail := t.plan(ctx, env, args)
	if fail != nil {
		return proposal{}, errors.New(fail.Content)
	}
	defer pl.w.Close()
	return proposal{rel: pl.rel, before: pl.before, after: []byte(pl.updated), existed: true}, nil
}

func (t editFile) Run(ctx context.Context, env *Env, args json.RawMessage) Result {
	const name = "edit_file"
	pl, fail := t.plan(ctx, env, args)
	if fail != nil {
		return *fail
	}
	w, rel := pl.w, pl.rel
	defer w.Close()
	if err := ctx.Err(); err != nil {
		return errorf(name, "the call was cancelled before %q was changed; call again if still needed", rel)
	}
	content, rejected, refusal := applyChoice(ctx, name, pl.before, []byte(pl.updated), true)
	if refusal != nil {
		return *refusal
	}
	recRel := w.recordTarget(rel, pl.fname)
	if r, ok := env.beforeWrite(name, recRel); !ok {
		return r
	}
	if _, err := w.writeAtomic(pl.fname, content); err != nil {
		if errors.Is(err, ErrOutsideWorkspace) {
			return errorf(name, "%s", describeStatError(rel, err))
		}
		return errorf(name, "writing %q failed (%v); check that the file is writable", rel, unwrapPathError(err))
	}
	res := Result{Paths: []string{rel}, Wrote: true}
	switch {
	case len(rejected) > 0:
		res.Content = fmt.Sprintf("edited %s: wrote the accepted hunks only", rel)
	case len(pl.starts) == 1:
		res.Content = fmt.Sprintf("edited %s: replaced 1 occurrence; %s", rel, changedRanges(pl.updated, pl.starts, pl.newS, 10))
	default:
		res.Content = fmt.Sprintf("edited %s: replaced %d occurrences; %s", rel, len(pl.starts), changedRanges(pl.updated, pl.starts, pl.newS, 10))
	}
	env.toEditor(ctx, rel, content)
	res.Content += rejectedNote(rel, rejected) + env.afterWrite(recRel)
	return res
}

// changedRanges describes the line ranges the replacements occupy in the new
// content, listing at most limit of them.
func changedRanges(updated string, starts []int, newS string, limit int) string {
	span := strings.Count(strings.TrimSuffix(newS, "\n"), "\n")
	var parts []string
	line, pos := 1, 0
	for i, s := range starts {
		if i == limit {
			parts = append(parts, fmt.Sprintf("and %d more", len(starts)-limit))
			break
		}
		line += strings.Count(updated[pos:s], "\n")
		pos = s
		switch {
		case newS == "":
			parts = append(parts, fmt.Sprintf("text removed at line %d", line))
		case span == 0:
			parts = append(parts, fmt.Sprintf("line %d", line))
		default:
			parts = append(parts, fmt.Sprintf("lines %d-%d", line, line+span))
		}
	}
	prefix := "now "
	if newS == "" {
		prefix = ""
	}
	return prefix + strings.Join(parts, ", ")
}

// matchLines lists the starting line numbers of the occurrences of sub in s,
// at most limit of them.
func matchLines(s, sub string, limit int) string {
	var parts []string
	line, pos, total := 1, 0, 0
	for {
		i := strings.Index(s[pos:], sub)
		if i < 0 {
			break
		}
		line += strings.Count(s[pos:pos+i], "\n")
		total++
		if len(parts) < limit {
			parts = append(parts, fmt.Sprint(line))
		}
		line += strings.Count(sub, "\n")
		pos += i + len(sub)
	}
	out := strings.Join(parts, ", ")
	if total > limit {
		out += fmt.Sprintf(" and %d more", total-limit)
	}
	return out
}

// fuzzyLine reports the line at which sub occurs in s when runs of
// whitespace are treated as equal (and leading and trailing whitespace of
// sub is ignored).
func fuzzyLine(s, sub string) (int, bool) {
	normSub, _ := collapseSpace(strings.TrimSpace(sub))
	if normSub == "" {
		return 0, false
	}
	norm, offsets := collapseSpace(s)
	i := strings.Index(norm, normSub)
	if i < 0 {
		return 0, false
	}
	return strings.Count(s[:offsets[i]], "\n") + 1, true
}

// collapseSpace replaces each run of whitespace in s with one space and
// returns, for every byte of the result, the offset in s it came from.
func collapseSpace(s string) (string, []int) {
	var b strings.Builder
	offsets := make([]int, 0, len(s))
	inSpace := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			if !inSpace {
				b.WriteByte(' ')
				offsets = append(offsets, i)
			}
			inSpace = true
		} else {
			b.WriteString(s[i : i+size])
			for k := range size {
				offsets = append(offsets, i+k)
			}
			inSpace = false
		}
		i += size
	}
	return b.String(), offsets
}
