package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/worktree"
	"github.com/tally-dev/tally/storage"
)

// Sessions in worktrees: a session created with CreateSessionInWorktree
// works in a git worktree of its own (package worktree), so two sessions
// on one repository never edit each other's files. The store keeps which
// worktree belongs to which session.

// worktreesKey is the store setting mapping session IDs to their trees.
const worktreesKey = "worktrees"

// WorktreesDir is where the worktrees of the store at dataPath are made:
// a folder beside the data directory (inside it, commands could not see
// them: the sandbox hides Tally's data).
func WorktreesDir(dataPath string) string {
	return filepath.Join(filepath.Dir(filepath.Dir(dataPath)), "tally-worktrees")
}

// CreateSessionInWorktree creates a session in a new worktree of the git
// repository workspace is in, on the branch tally/<session>, from the
// commit the repository's checkout is on. When the session cannot be
// created, the worktree is removed again.
func (w *Workbench) CreateSessionInWorktree(ctx context.Context, cfg agent.Config, workspace, title string) (*agent.Session, worktree.Tree, error) {
	id := agent.NewID(time.Now())
	c, cfg := w.newClaim(cfg)
	if err := c.take(id); err != nil {
		return nil, worktree.Tree{}, err // a new ID: never
	}
	t, err := worktree.Create(ctx, workspace, WorktreesDir(w.store.Path()), id)
	if err != nil {
		c.release()
		return nil, worktree.Tree{}, err
	}
	if err := w.editTrees(func(m map[string]worktree.Tree) { m[id] = t }); err != nil {
		c.release()
		_ = t.Remove(ctx, true)
		return nil, worktree.Tree{}, err
	}
	sess, err := agent.Create(cfg, id, t.Path, title)
	if err != nil {
		c.release()
		_ = t.Remove(ctx, true)
		_ = w.editTrees(func(m map[string]worktree.Tree) { delete(m, id) })
		return nil, worktree.Tree{}, err
	}
	return sess, t, nil
}

// Worktree returns the worktree of session id; ok is false for a session
// that works in its folder directly.
func (w *Workbench) Worktree(id string) (t worktree.Tree, ok bool, err error) {
	m, err := w.trees()
	if err != nil {
		return worktree.Tree{}, false, err
	}
	t, ok = m[id]
	return t, ok, nil
}

// Branch returns the git branch of the repository holding workspace, as
// the model's status block names it (see status.GitBranch): read without
// running git; "" for a folder in no repository.
func (w *Workbench) Branch(workspace string) string { return status.GitBranch(workspace) }

// WorktreeDiff is what session id changed in its worktree against the
// commit it started from.
func (w *Workbench) WorktreeDiff(ctx context.Context, id string) (string, error) {
	t, err := w.needTree(id)
	if err != nil {
		return "", err
	}
	return t.Diff(ctx)
}

// MergeWorktree commits what session id changed on its branch and merges
// the branch into the repository's checkout (see worktree.Tree.Merge).
func (w *Workbench) MergeWorktree(ctx context.Context, id string) error {
	t, err := w.needTree(id)
	if err != nil {
		return err
	}
	title := id
	if info, err := w.Session(id); err == nil && info.Title != "" {
		title = info.Title
	}
	return t.Merge(ctx, fmt.Sprintf("Tally session %s: %s", id, title))
}

// RemoveWorktree deletes the worktree of session id (and with
// deleteBranch its branch), discarding what was not merged, and forgets
// it. The session stays; it can no longer run in its folder.
func (w *Workbench) RemoveWorktree(ctx context.Context, id string, deleteBranch bool) error {
	t, err := w.needTree(id)
	if err != nil {
		return err
	}
	if err := t.Remove(ctx, deleteBranch); err != nil {
		return err
	}
	return w.editTrees(func(m map[string]worktree.Tree) { delete(m, id) })
}

// ErrNoWorktree is returned for a session that has no worktree.
var ErrNoWorktree = errors.New("the session works in its folder directly, not in a worktree of its own")

func (w *Workbench) needTree(id string) (worktree.Tree, error) {
	t, ok, err := w.Worktree(id)
	if err != nil {
		return worktree.Tree{}, err
	}
	if !ok {
		return worktree.Tree{}, ErrNoWorktree
	}
	return t, nil
}

func (w *Workbench) trees() (map[string]worktree.Tree, error) {
	m := map[string]worktree.Tree{}
	data, err := w.store.Setting(worktreesKey)
	if err != nil || len(data) == 0 {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("the store's list of worktrees is unreadable (%w); `git worktree list` in the repository shows them", err)
	}
	return m, nil
}

func (w *Workbench) editTrees(edit func(map[string]worktree.Tree)) error {
	return w.store.Update(func(tx *storage.Tx) error {
		m := map[string]worktree.Tree{}
		if data, err := tx.Setting(worktreesKey); err != nil {
			return err
		} else if len(data) > 0 {
			_ = json.Unmarshal(data, &m) // unreadable: start over
		}
		edit(m)
		data, err := json.Marshal(m)
		if err != nil {
			return err
		}
		return tx.PutSetting(worktreesKey, data)
	})
}
