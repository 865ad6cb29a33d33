package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/tally-dev/tally/internal/text"
)

//go:embed write_file.md
var writeFileDoc string

// WriteFileParams are the arguments of write_file.
type WriteFileParams struct {
	// Path is the file to write, relative to the workspace root.
	Path string `json:"path"`
	// Content is the complete new content; it is required but may be
	// empty.
	Content *string `json:"content"`
}

var writeFileSpec = Spec{
	Name:        "write_file",
	Description: strings.TrimSpace(writeFileDoc),
	Parameters: schema(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "File path relative to the workspace root."},
			"content": {"type": "string", "description": "The complete new content of the file."}
		},
		"required": ["path", "content"],
		"additionalProperties": false
	}`),
}

type writeFile struct{}

// WriteFile returns the write_file tool: it creates or replaces a workspace
// file atomically (temporary file and rename), creating parent directories,
// and reports the size and whether the file was created or overwritten. It
// needs approval.
func WriteFile() Tool { return writeFile{} }

func (writeFile) Spec() Spec          { return writeFileSpec }
func (writeFile) NeedsApproval() bool { return true }

// target decodes a write_file call and confines its path: the workspace
// handle (which the caller closes), the parameters, the path and the
// existing file's info (nil when it does not exist).
func (writeFile) target(env *Env, args json.RawMessage) (*wsRoot, WriteFileParams, string, string, fs.FileInfo, *Result) {
	const name = "write_file"
	var p WriteFileParams
	fail := func(r Result) (*wsRoot, WriteFileParams, string, string, fs.FileInfo, *Result) {
		return nil, p, "", "", nil, &r
	}
	if err := decodeParams(name, args, &p); err != nil {
		return fail(errResult(name, err))
	}
	if p.Path == "" {
		return fail(errorf(name, "path is missing; pass the file path relative to the workspace root"))
	}
	if p.Content == nil {
		return fail(errorf(name, "content is missing for %q; pass the complete file text in content (an empty string for an empty file)", p.Path))
	}
	w, err := openWorkspace(env, p.Path)
	if err != nil {
		return fail(errResult(name, err))
	}
	rel, fname, err := w.confine(p.Path)
	if err != nil {
		w.Close()
		return fail(errResult(name, err))
	}
	if rel == "." {
		w.Close()
		return fail(errorf(name, "%q is the workspace root; pass a file path inside it", p.Path))
	}
	fi, _, err := w.stat(fname)
	if err != nil {
		return w, p, rel, fname, nil, nil
	}
	if fi.IsDir() {
		w.Close()
		return fail(errorf(name, "%q is a directory; pass a file path", rel))
	}
	if !fi.Mode().IsRegular() {
		w.Close()
		return fail(errorf(name, "%q is not a regular file (%s); pass the path of a regular file", rel, fi.Mode().Type()))
	}
	return w, p, rel, fname, fi, nil
}

// current reads the file a write replaces, if it exists.
func (w *wsRoot) current(name, rel string, fi fs.FileInfo) ([]byte, error) {
	if fi == nil {
		return nil, nil
	}
	data, err := w.readRegular(name, fi, EditFileMaxSize)
	if errors.Is(err, errTooBig) {
		return nil, fmt.Errorf("%q is over %s bytes, too large to review hunk by hunk", rel, text.Thousands(EditFileMaxSize))
	}
	return data, err
}

func (t writeFile) propose(_ context.Context, env *Env, args json.RawMessage) (proposal, error) {
	w, p, rel, fname, fi, fail := t.target(env, args)
	if fail != nil {
		return proposal{}, errors.New(fail.Content)
	}
	defer w.Close()
	before, err := w.current(fname, rel, fi)
	if err != nil {
		return proposal{}, err
	}
	return proposal{rel: rel, before: before, after: []byte(*p.Content), existed: fi != nil}, nil
}

func (t writeFile) Run(ctx context.Context, env *Env, args json.RawMessage) Result {
	const name = "write_file"
	w, p, rel, fname, fi, fail := t.target(env, args)
	if fail != nil {
		return *fail
	}
	defer w.Close()
	if err := ctx.Err(); err != nil {
		return errorf(name, "the call was cancelled before %q was written; call again if still needed", rel)
	}
	var oldSize int64 = -1
	if fi != nil {
		oldSize = fi.Size()
	}
	if what, secret := w.secretPath(env, rel, fname); secret && !secretReadAllowed(ctx) {
		return refuseSecret(name, what, "written", "write")
	}
	content := []byte(*p.Content)
	var rejected []string
	if _, ok := hunkChoiceFrom(ctx); ok {
		before, err := w.current(fname, rel, fi)
		if err != nil {
			return errorf(name, "%q could not be read again to apply the accepted hunks (%v); call again", rel, unwrapPathError(err))
		}
		var refusal *Result
		if content, rejected, refusal = applyChoice(ctx, name, before, content, fi != nil); refusal != nil {
			return *refusal
		}
	}
	recRel := w.recordTarget(rel, fname)
	if r, ok := env.beforeWrite(name, recRel); !ok {
		return r
	}
	created, err := w.writeAtomic(fname, content)
	if err != nil {
		switch {
		case errors.Is(err, errIsDir):
			return errorf(name, "%q is a directory; pass a file path", rel)
		case errors.Is(err, ErrOutsideWorkspace):
			return errorf(name, "%s", describeStatError(rel, err))
		}
		return errorf(name, "writing %q failed (%v); check that its directory is writable and not a file", rel, unwrapPathError(err))
	}
	res := Result{Paths: []string{rel}, Wrote: true}
	n := text.Plural(len(content), "byte")
	if created {
		res.Content = fmt.Sprintf("created %s (%s)", rel, n)
	} else {
		res.Content = fmt.Sprintf("overwrote %s (%s, was %s)", rel, n, text.Plural(int(oldSize), "byte"))
	}
	env.toEditor(ctx, rel, content)
	res.Content += rejectedNote(rel, rejected) + env.afterWrite(recRel)
	return res
}
