// Package worktree gives a session a git worktree of its own: a checkout
// of the repository on the branch tally/<session>, made from the commit
// the repository's checkout is on, so two sessions on one repository
// never edit files underneath each other. It shows what the session
// changed against that base, merges it back into the repository's
// checkout, and removes the worktree.
//
// It runs the git program; every failure names the git command and what
// git said, in one sentence.
package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tally-dev/tally/internal/gitsafe"
)

// BranchPrefix starts the name of every session branch.
const BranchPrefix = "tally/"

// gitTimeout bounds one git command.
const gitTimeout = 2 * time.Minute

// Tree is one session's worktree.
type Tree struct {
	// Repo is the repository's main checkout, Path the worktree.
	Repo string `json:"repo"`
	Path string `json:"path"`
	// Branch is the session's branch, Base the commit it started from.
	Branch string `json:"branch"`
	Base   string `json:"base"`
}

// ErrNotRepository is returned when a folder is not inside a git
// repository.
var ErrNotRepository = errors.New("the folder is not inside a git repository; pick a repository's folder, or start the session without a worktree")

// gitEnv is git's environment: the user's, without the GIT_ variables
// that could point it at another repository, work tree, config or
// program, with prompts off and messages in English.
func gitEnv() []string {
	env := make([]string, 0, len(os.Environ())+2)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
}

// git runs git in dir, with the hardening options, and returns its
// standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	return runGit(ctx, append([]string{"-C", dir}, args...), args)
}

// runGit runs git with the hardening options and full, naming shown in a
// failure.
func runGit(ctx context.Context, full, shown []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	// Every git Tally runs has the repository's programs switched off
	// (gitsafe): a folder the agent can write may name them.
	cmd := exec.CommandContext(ctx, "git", append(gitsafe.Flags(), full...)...)
	cmd.Env = gitEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = err.Error()
		}
		if i := strings.IndexByte(msg, '\n'); i > 0 {
			msg = msg[:i]
		}
		return out.String(), fmt.Errorf("git %s failed: %s", strings.Join(shown, " "), msg)
	}
	return out.String(), nil
}

// treeGit runs git on a worktree with the repository's own record of it as
// the git directory (see adminDir): the worktree's .git, which the agent
// can replace with a repository of its own, is never read. It is found
// once per operation.
type treeGit struct {
	path, admin string
}

// git returns the worktree's git (see treeGit).
func (t Tree) git(ctx context.Context) (treeGit, error) {
	admin, err := t.adminDir(ctx)
	return treeGit{path: t.Path, admin: admin}, err
}

func (g treeGit) run(ctx context.Context, args ...string) (string, error) {
	return runGit(ctx, append([]string{"--git-dir=" + g.admin, "--work-tree=" + g.path, "-C", g.path}, args...), args)
}

// adminDir returns the folder in which the main repository records the
// worktree t (.git/worktrees/<name>), found from the repository's side:
// the one whose gitdir file names t's .git.
func (t Tree) adminDir(ctx context.Context) (string, error) {
	common, err := git(ctx, t.Repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	want := sameFile(filepath.Join(t.Path, ".git"))
	dirs, _ := os.ReadDir(filepath.Join(strings.TrimSpace(common), "worktrees"))
	for _, d := range dirs {
		admin := filepath.Join(strings.TrimSpace(common), "worktrees", d.Name())
		data, err := os.ReadFile(filepath.Join(admin, "gitdir"))
		if err == nil && sameFile(strings.TrimSpace(string(data))) == want {
			return admin, nil
		}
	}
	return "", fmt.Errorf("the repository %s has no record of the worktree %s any more; remove the worktree and start the session again", t.Repo, t.Path)
}

// sameFile returns p with its folder's links resolved, so two names of one
// file compare equal.
func sameFile(p string) string {
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(dir, filepath.Base(p))
	}
	return filepath.Clean(p)
}

// Top returns the root of the repository's checkout dir is in.
func Top(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", ErrNotRepository
	}
	return strings.TrimSpace(out), nil
}

// Create makes the worktree of session id for the repository dir is in,
// at root/<repository name>-<id>, on a new branch tally/<id> from the
// commit the repository's checkout is on.
func Create(ctx context.Context, dir, root, id string) (Tree, error) {
	top, err := Top(ctx, dir)
	if err != nil {
		return Tree{}, err
	}
	base, err := git(ctx, top, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return Tree{}, errors.New("the repository has no commit yet, so there is nothing to branch from; commit once, or start the session without a worktree")
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return Tree{}, fmt.Errorf("the worktrees folder %s cannot be made (%w); check its permissions", root, err)
	}
	t := Tree{Repo: top, Path: filepath.Join(root, filepath.Base(top)+"-"+id), Branch: BranchPrefix + id, Base: strings.TrimSpace(base)}
	if _, err := git(ctx, top, "worktree", "add", "-b", t.Branch, t.Path, t.Base); err != nil {
		return Tree{}, err
	}
	return t, nil
}

// snapshot stages everything the session changed in its worktree, new
// files included, so that what it did can be compared and committed.
func (t Tree) snapshot(ctx context.Context) (treeGit, error) {
	g, err := t.git(ctx)
	if err == nil {
		_, err = g.run(ctx, "add", "-A")
	}
	return g, err
}

// Diff is what the session changed against its base: committed and not,
// new files included, as a unified diff ("" when nothing changed).
func (t Tree) Diff(ctx context.Context) (string, error) {
	g, err := t.snapshot(ctx)
	if err != nil {
		return "", err
	}
	return g.run(ctx, "diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", t.Base)
}

// Merge commits what the session changed on its branch (message names
// the session) and merges the branch into the branch the repository's
// main checkout is on. Git refuses when the checkout has changes the
// merge would overwrite, or the two conflict; the error says so, and
// nothing is left half-merged.
func (t Tree) Merge(ctx context.Context, message string) error {
	g, err := t.snapshot(ctx)
	if err != nil {
		return err
	}
	if _, err := g.run(ctx, "diff", "--cached", "--quiet", "--no-ext-diff"); err != nil {
		if _, err := g.run(ctx, "-c", "user.name=Tally", "-c", "user.email=tally@localhost", "commit", "-q", "--no-verify", "-m", message); err != nil {
			return err
		}
	}
	ahead, err := git(ctx, t.Repo, "rev-list", "--count", t.Base+".."+t.Branch)
	if err != nil {
		return err
	}
	if strings.TrimSpace(ahead) == "0" {
		return errors.New("the session changed nothing, so there is nothing to merge")
	}
	if _, err := git(ctx, t.Repo, "-c", "user.name=Tally", "-c", "user.email=tally@localhost", "merge", "--no-ff", "--no-edit", "-m", message, t.Branch); err != nil {
		_, _ = git(ctx, t.Repo, "merge", "--abort")
		return fmt.Errorf("%w; resolve it in %s by hand (git merge %s), or keep working in the worktree", err, t.Repo, t.Branch)
	}
	return nil
}

// Remove deletes the worktree, discarding what was not merged, and with
// deleteBranch its branch too.
func (t Tree) Remove(ctx context.Context, deleteBranch bool) error {
	if _, err := git(ctx, t.Repo, "worktree", "remove", "--force", t.Path); err != nil {
		if _, statErr := os.Stat(t.Path); !errors.Is(statErr, os.ErrNotExist) {
			return err
		}
		_, _ = git(ctx, t.Repo, "worktree", "prune")
	}
	if deleteBranch {
		if _, err := git(ctx, t.Repo, "branch", "-D", t.Branch); err != nil {
			return err
		}
	}
	return nil
}
