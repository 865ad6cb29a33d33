package workbench

import (
	"context"
	"fmt"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/fork"
	"github.com/tally-dev/tally/engine/rewind"
	"github.com/tally-dev/tally/engine/worktree"
)

// ForkOptions say how ForkSession forks a session.
type ForkOptions struct {
	// Turn is the turn the fork's history ends with (rewind.Turn.N); 0
	// means the parent's last turn.
	Turn int
	// Title is the fork's title; "" gives the parent's with "(fork)".
	Title string
	// Worktree gives the fork a new git worktree of the parent's
	// repository, on the branch tally/<fork>, whose files the session
	// changed are put as they were at the end of Turn. Without it the
	// fork shares the parent's folder and no file is touched.
	Worktree bool
}

// Forked is what ForkSession made.
type Forked struct {
	Session  SessionInfo
	Turn     int           // the turn it was forked at
	Messages int           // messages copied from the parent's current log
	Tree     worktree.Tree // the fork's worktree (with ForkOptions.Worktree)
	// Files is what was put into the worktree: the files the parent
	// changed, as they were at the end of Turn, and those that could not
	// be (with the reason).
	Files filehistory.Result
}

// ForkSession starts a new session whose history is session parent's up
// to the end of a turn, byte for byte, so the provider's cached prefix
// still serves its first request (see package fork). It can be called
// while the parent is open elsewhere: it reads the parent's committed
// state and never changes it. With o.Worktree, the worktree is removed
// again if the fork cannot be stored.
func (w *Workbench) ForkSession(ctx context.Context, parent string, o ForkOptions) (Forked, error) {
	info, err := w.store.Session(parent)
	if err != nil {
		return Forked{}, fmt.Errorf("there is no session %q to fork (%w); run `tally sessions` to list them", parent, err)
	}
	id := agent.NewID(time.Now())
	fo := fork.Options{Parent: parent, Turn: o.Turn, ID: id, Title: o.Title}
	var tree worktree.Tree
	if o.Worktree {
		if tree, err = worktree.Create(ctx, info.Workspace, WorktreesDir(w.store.Path()), id); err != nil {
			return Forked{}, err
		}
		fo.Workspace = tree.Path
		fo.Note = fmt.Sprintf("This conversation was forked from session %s. From here on it works in its own git worktree, %s (branch %s), not in %s: tool paths stay relative to the workspace, and a command's absolute paths must name the new folder.",
			parent, tree.Path, tree.Branch, info.Workspace)
	}
	res, err := fork.Fork(w.store, fo)
	if err != nil {
		if o.Worktree {
			_ = tree.Remove(ctx, true)
		}
		return Forked{}, err
	}
	out := Forked{Session: res.Session, Turn: res.Turn, Messages: res.Messages, Tree: tree}
	if !o.Worktree {
		return out, nil
	}
	if err := w.editTrees(func(m map[string]worktree.Tree) { m[id] = tree }); err != nil {
		return out, fmt.Errorf("the fork %s was made, but its worktree could not be recorded (%w); remove %s with git worktree remove", id, err, tree.Path)
	}
	saved := w.Settings()
	ws, err := filehistory.Open(w.store, info.Workspace, rewind.Limits(saved.CheckpointCap, saved.Shell.SecretFiles))
	if err == nil {
		out.Files, err = ws.CopyTo(parent, res.End, tree.Path)
	}
	if err != nil {
		return out, fmt.Errorf("the fork %s was made in %s, but its files could not be put as they were at turn %d (%w); it holds the files of the commit it started from", id, tree.Path, res.Turn, err)
	}
	return out, nil
}

// Lineage says where a forked session comes from, as the session lists
// show it: "forked from <parent> at turn N", naming the parent by its
// title when it is among list (else, or with a nil list, by its ID); ""
// for a session that is not a fork.
func Lineage(s SessionInfo, list []SessionInfo) string {
	if s.ForkOf == "" {
		return ""
	}
	name := s.ForkOf
	for _, p := range list {
		if p.ID == s.ForkOf && p.Title != "" {
			name = p.Title
		}
	}
	return fmt.Sprintf("forked from %s at turn %d", name, s.ForkTurn)
}
