package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tally-dev/tally/engine/workbench"
)

// takeForkFlags removes fork's own flags (--at N, --title T, in the forms
// --name value and --name=value) from args, leaving the shared flags.
func takeForkFlags(args []string) (o workbench.ForkOptions, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		key, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if a == "--" || !strings.HasPrefix(a, "-") || (key != "at" && key != "title") {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return o, nil, usagef("tally fork: --%s needs a value", key)
			}
			i++
			val = args[i]
		}
		if key == "title" {
			o.Title = val
			continue
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 {
			return o, nil, usagef("tally fork: --at must be a turn number from 1 on, not %q", val)
		}
		o.Turn = n
	}
	return o, rest, nil
}

// cmdFork runs `tally fork SESSION [--at N] [--worktree] [--title T]`: a
// new session whose history is SESSION's up to the end of turn N (its
// last turn by default), in the same folder or in a worktree of its own.
func cmdFork(args []string, stdout, stderr io.Writer) error {
	fo, rest, err := takeForkFlags(args)
	if err != nil {
		return err
	}
	o, id, w, err := openSessionStore("fork", rest, stderr, false)
	if err != nil {
		return err
	}
	defer w.Close()
	fo.Worktree = o.worktree
	f, err := w.ForkSession(context.Background(), id, fo)
	if err != nil && f.Session.ID == "" {
		return fmt.Errorf("tally fork: %s", message(err))
	}
	fmt.Fprintf(stdout, "%s\tforked from %s at turn %d (%d messages, the parent's prefix byte for byte)\n", f.Session.ID, id, f.Turn, f.Messages)
	if fo.Worktree {
		fmt.Fprintf(stdout, "worktree %s on branch %s: %d files the session changed put as they were at turn %d\n",
			safeText(f.Tree.Path), f.Tree.Branch, len(f.Files.Restored), f.Turn)
		for _, s := range f.Files.Skipped {
			fmt.Fprintf(stdout, "  not copied: %s\n", safeText(s))
		}
	} else {
		fmt.Fprintf(stdout, "it shares %s with %s; no file was touched\n", safeText(f.Session.Workspace), id)
	}
	fmt.Fprintf(stdout, "continue it with: tally run --session %s \"…\"\n", f.Session.ID)
	if err != nil {
		return fmt.Errorf("tally fork: %s", message(err))
	}
	return nil
}
