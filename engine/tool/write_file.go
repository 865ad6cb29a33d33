package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

func (writeFile) Run(ctx context.Context, env *Env, args json.RawMessage) Result {
	const name = "write_file"
	var p WriteFileParams
	if err := decodeParams(name, args, &p); err != nil {
		return errResult(name, err)
	}
	if p.Path == "" {
		return errorf(name, "path is missing; pass the file path relative to the workspace root")
	}
	if p.Content == nil {
		return errorf(name, "content is missing for %q; pass the complete file text in content (an empty string for an empty file)", p.Path)
	}
	w, err := openWorkspace(env)
	if err != nil {
		return errResult(name, err)
	}
	defer w.Close()
	rel, fname, err := w.confine(p.Path)
	if err != nil {
		return errResult(name, err)
	}
	if rel == "." {
		return errorf(name, "%q is the workspace root; pass a file path inside it", p.Path)
	}
	if err := ctx.Err(); err != nil {
		return errorf(name, "the call was cancelled before %q was written; call again if still needed", rel)
	}
	var oldSize int64 = -1
	if fi, _, err := w.stat(fname); err == nil {
		if fi.IsDir() {
			return errorf(name, "%q is a directory; pass a file path", rel)
		}
		if !fi.Mode().IsRegular() {
			return errorf(name, "%q is not a regular file (%s); pass the path of a regular file", rel, fi.Mode().Type())
		}
		oldSize = fi.Size()
	}
	if what, secret := w.secretPath(env, rel, fname); secret && !secretReadAllowed(ctx) {
		return refuseSecret(name, what, "written", "write")
	}
	created, err := w.writeAtomic(fname, []byte(*p.Content))
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
	n := byteCount(len(*p.Content))
	if created {
		res.Content = fmt.Sprintf("created %s (%s)", rel, n)
	} else {
		res.Content = fmt.Sprintf("overwrote %s (%s, was %s)", rel, n, byteCount(int(oldSize)))
	}
	return res
}
