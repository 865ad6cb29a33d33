package tool

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/tally-dev/tally/engine/diff"
)

// Change is the whole change a write_file or edit_file call would make to
// its file, for a host that shows it beside the call (an editor's diff
// view): the file's content now and after the call.
type Change struct {
	Path string // the file, workspace-relative with slashes
	Abs  string // the file's absolute path in the workspace
	// Before is the file's content now (nil when the file does not exist,
	// Existed false): on disk, or the editor's buffer where the session has
	// one (see Editor); After is the content the call would write.
	Before, After []byte
	Existed       bool
	Diff          diff.Diff // Before to After, as the approval card shows it
}

// Preview computes the change a write_file or edit_file call with args
// would make, without writing anything and inside the workspace's
// confinement. ok is false for any other tool, for a file on the
// secret-file deny list (its content is never shown) and for a call that
// would fail anyway.
func Preview(ctx context.Context, env *Env, t Tool, args string) (c Change, ok bool) {
	if t == nil || env == nil {
		return Change{}, false
	}
	name := t.Spec().Name
	if _, secret := SecretTarget(env, name, json.RawMessage(args)); secret {
		return Change{}, false
	}
	pr, d := proposeFor(ctx, env, t, args)
	if pr == nil || d == nil {
		return Change{}, false
	}
	ws, err := env.root()
	if err != nil {
		return Change{}, false
	}
	return Change{
		Path: pr.rel, Abs: filepath.Join(ws, filepath.FromSlash(pr.rel)),
		Before: pr.before, After: pr.after, Existed: pr.existed, Diff: *d,
	}, true
}
