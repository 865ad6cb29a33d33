package cli

import (
	"context"
	"fmt"
	"io"
)

// worktreeUsage is the help of `tally worktree`.
const worktreeUsage = `usage:
  tally worktree diff SESSION              what the session changed in its worktree, against the commit it started from
  tally worktree merge SESSION             commit it on the session's branch and merge it into the repository's checkout
  tally worktree remove SESSION [--branch] delete the worktree (and with --branch its branch), discarding what was not merged`

// cmdWorktree runs `tally worktree diff|merge|remove SESSION`, for the
// sessions `tally run --worktree` made.
func cmdWorktree(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageNote(worktreeUsage, "tally worktree: say what to do")
	}
	sub, rest := args[0], args[1:]
	branch := false
	var kept []string
	for _, a := range rest {
		if a == "--branch" || a == "-branch" {
			branch = true
			continue
		}
		kept = append(kept, a)
	}
	switch sub {
	case "diff", "merge", "remove":
	default:
		return usageNote(worktreeUsage, "tally worktree: unknown subcommand %q", sub)
	}
	_, id, w, err := openSessionStore("worktree "+sub, kept, stderr, false)
	if err != nil {
		return err
	}
	defer w.Close()
	ctx := context.Background()
	switch sub {
	case "diff":
		d, err := w.WorktreeDiff(ctx, id)
		if err != nil {
			return fmt.Errorf("tally worktree diff: %s", message(err))
		}
		fmt.Fprint(stdout, d)
	case "merge":
		if err := w.MergeWorktree(ctx, id); err != nil {
			return fmt.Errorf("tally worktree merge: %s", message(err))
		}
		t, _, _ := w.Worktree(id)
		fmt.Fprintf(stdout, "merged %s into the checkout of %s\n", t.Branch, safeText(t.Repo))
	case "remove":
		t, _, _ := w.Worktree(id)
		if err := w.RemoveWorktree(ctx, id, branch); err != nil {
			return fmt.Errorf("tally worktree remove: %s", message(err))
		}
		fmt.Fprintf(stdout, "removed the worktree %s\n", safeText(t.Path))
	}
	return nil
}
