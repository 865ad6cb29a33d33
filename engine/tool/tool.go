package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tally-dev/tally/engine/images"
)

// Spec is what the model sees of a tool: its name, a description of what it
// does and when to use it, and a JSON Schema object describing its
// parameters. Parameters is always a JSON object for the built-in tools.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Result is a tool's answer to the model.
type Result struct {
	// Content is the text handed back to the model. For failures it is a
	// single sentence saying what went wrong and what to do next.
	Content string
	// IsError reports that the call failed (bad arguments, a refused path,
	// a missing file, a command that exited non-zero, ...).
	IsError bool
	// Paths lists the workspace-relative, slash-separated paths the call
	// read or wrote, without duplicates, for the engine's working set.
	Paths []string
	// Wrote is true when the call changed files in the workspace.
	Wrote bool
	// Redacted counts the secrets replaced by "[redacted: kind]" in
	// Content at intake; RedactedKinds names their kinds, without
	// duplicates.
	Redacted      int
	RedactedKinds []string
	// Image is a picture the call returns for the model to see (read_file
	// of an image when Env.Vision is set), nil for none. Content then says
	// what it is; the engine sends the picture itself after the step's
	// results (see the agent's attachments).
	Image *Image
}

// Image is a picture a tool returns: its bytes, checked by images.Check,
// and what the check learnt of them.
type Image struct {
	Data []byte
	Info images.Info
}

// Env is what a tool may touch. Tools read it and never modify it, so one
// Env may be shared by concurrent calls.
type Env struct {
	// Workspace is the absolute path of the workspace root. Every path a
	// tool touches is confined to it or to one of Roots.
	Workspace string
	// Roots are further folders the session may read and change (an
	// editor's additional directories): absolute, clean, existing, and
	// neither inside Workspace nor holding it or each other (see
	// workspace.Roots). The file tools reach their files by absolute path
	// and show them so; sandboxed commands may write in them.
	Roots []string
	// ShellTimeout bounds a run_shell call that does not ask for its own
	// timeout. Zero means [DefaultShellTimeout].
	ShellTimeout time.Duration
	// OutputLimit caps the combined output kept from a run_shell call, in
	// bytes. Zero or negative means [DefaultOutputLimit].
	OutputLimit int
	// SecretFiles are the deny-list patterns of files the file tools refuse
	// unless the user allows that one read: nil means the default list, an
	// empty non-nil slice none.
	SecretFiles []string
	// ShellEnv names extra environment variables run_shell passes to
	// commands, on top of the built-in allow-list; names that look like
	// secrets never pass.
	ShellEnv []string
	// TempDir is the session's own temporary directory, writable inside
	// the sandbox and exported to commands as TMPDIR; "" means none.
	TempDir string
	// CacheDirs are further folders sandboxed commands may write, shared
	// with the user's own builds: only what the user listed in the
	// settings. Sandboxed commands get build caches of their own (see
	// CacheRoot) and never write the user's.
	CacheDirs []string
	// CacheRoot is the folder under which sandboxed commands get private
	// build caches, one set per workspace; "" means Tally's folder in the
	// user's cache directory.
	CacheRoot string
	// Private lists paths sandboxed commands may not read even where the
	// rest of their tree is readable (the session's data directory); the
	// home directory's credential stores and every file and folder Tally
	// keeps for itself (see ownpaths.Hidden) are always private.
	Private []string
	// AllowNetwork lets sandboxed commands open TCP connections.
	AllowNetwork bool
	// FetchLocal lets web_fetch reach loopback and link-local addresses;
	// off, a page there (or a redirect to one) is refused.
	FetchLocal bool
	// RequireSandbox makes run_shell refuse to run a command when the
	// sandbox cannot be applied, instead of running it unsandboxed.
	RequireSandbox bool
	// Vision says the session's model accepts images: read_file then
	// returns a picture as an Image instead of a line saying it cannot be
	// shown.
	Vision bool
	// Recorder, when set, is told before and after every change
	// write_file, edit_file and run_shell make to the workspace, so the
	// changes can be undone; see [Recorder].
	Recorder Recorder
	// Editor, when set, is the editor the session is driven from: the
	// file tools read text from it and tell it what they wrote (see
	// [Editor]).
	Editor Editor
}

// Defaults used when the corresponding Env field is zero.
const (
	DefaultShellTimeout = 2 * time.Minute
	DefaultOutputLimit  = 64 << 10
)

// Tool is one callable tool. Implementations must be safe for concurrent use
// and must report failures through the returned Result rather than by
// panicking.
type Tool interface {
	// Spec describes the tool to the model. It must return the same value
	// on every call.
	Spec() Spec
	// NeedsApproval reports whether a user must approve each call before
	// it runs (tools that change files or run commands).
	NeedsApproval() bool
	// Run executes one call with the given JSON arguments.
	Run(ctx context.Context, env *Env, args json.RawMessage) Result
}

// root returns the cleaned absolute workspace root, or an error when the Env
// does not name one.
func (e *Env) root() (string, error) {
	if e == nil || e.Workspace == "" {
		return "", errors.New("no workspace is configured; open a workspace folder first")
	}
	ws, err := filepath.Abs(e.Workspace)
	if err != nil {
		return "", fmt.Errorf("workspace %q cannot be resolved (%w); open a different workspace folder", e.Workspace, err)
	}
	return ws, nil
}

// rootOf returns the folder path p is to be confined to, and the prefix
// its files are shown with: the additional root an absolute p lies in
// (shown by its absolute path), else the workspace (shown relative to
// it, prefix "").
func (e *Env) rootOf(p string) (dir, shown string, err error) {
	if e != nil && filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		for _, r := range e.Roots {
			if within(r, clean) {
				return r, filepath.ToSlash(r), nil
			}
			if real, err := filepath.EvalSymlinks(r); err == nil && within(real, clean) {
				return r, filepath.ToSlash(r), nil
			}
		}
	}
	ws, err := e.root()
	return ws, "", err
}

// abs returns the absolute path of a file the tools show as rel: rel
// itself for a file of an additional root, else rel inside the
// workspace.
func (e *Env) abs(rel string) string {
	if filepath.IsAbs(filepath.FromSlash(rel)) {
		return filepath.FromSlash(rel)
	}
	return filepath.Join(e.Workspace, filepath.FromSlash(rel))
}

func (e *Env) shellTimeout() time.Duration {
	if e == nil || e.ShellTimeout <= 0 {
		return DefaultShellTimeout
	}
	return e.ShellTimeout
}

func (e *Env) outputLimit() int {
	if e == nil || e.OutputLimit <= 0 {
		return DefaultOutputLimit
	}
	return e.OutputLimit
}

// errorf builds an error Result whose content is prefixed with the tool name.
func errorf(tool, format string, args ...any) Result {
	return Result{Content: tool + ": " + fmt.Sprintf(format, args...), IsError: true}
}

// errResult turns err into an error Result prefixed with the tool name.
func errResult(tool string, err error) Result {
	return Result{Content: tool + ": " + err.Error(), IsError: true}
}
