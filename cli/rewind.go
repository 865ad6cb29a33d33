package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/rewind"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
)

// undoFlags are the flags only changes and rewind take.
type undoFlags struct {
	turn                       int // --turn (changes) or --to (rewind)
	turnSet                    bool
	filesOnly, chatOnly, force bool
}

// takeUndoFlags removes the flags of changes and rewind from args (in the
// forms --name value, --name=value, and a single dash), leaving the shared
// flags to parse. turnFlag is "turn" or "to".
func takeUndoFlags(name, turnFlag string, args []string) (undoFlags, []string, error) {
	var f undoFlags
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		key, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		switch key {
		case turnFlag:
			if !hasVal {
				if i+1 >= len(args) {
					return f, nil, usagef("tally %s: --%s needs a turn number", name, turnFlag)
				}
				i++
				val = args[i]
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return f, nil, usagef("tally %s: --%s must be a turn number from 1 on, not %q", name, turnFlag, val)
			}
			f.turn, f.turnSet = n, true
		case "files-only", "chat-only", "force":
			if name != "rewind" {
				rest = append(rest, a)
				continue
			}
			on := !hasVal || val == "true"
			switch key {
			case "files-only":
				f.filesOnly = on
			case "chat-only":
				f.chatOnly = on
			default:
				f.force = on
			}
		default:
			rest = append(rest, a)
		}
	}
	return f, rest, nil
}

// cmdChanges prints the diffs of every file a session changed.
func cmdChanges(args []string, stdout, stderr io.Writer) error {
	f, rest, err := takeUndoFlags("changes", "turn", args)
	if err != nil {
		return err
	}
	_, id, w, err := openSessionStore("changes", rest, stderr, true)
	if err != nil {
		return err
	}
	defer w.Close()
	changes, err := w.Changes(id, f.turn)
	if err != nil {
		return fmt.Errorf("tally changes: %w", err)
	}
	since := "since the session started"
	if f.turnSet {
		since = fmt.Sprintf("since the start of turn %d", f.turn)
	}
	if len(changes) == 0 {
		fmt.Fprintf(stdout, "No files changed %s.\n", since)
		return nil
	}
	fmt.Fprintf(stdout, "%d file(s) changed %s:\n", len(changes), since)
	for _, c := range changes {
		if !c.Restorable {
			fmt.Fprintf(stdout, "%s: changed, not restorable: %s\n", c.Path, c.Why)
		}
	}
	for _, c := range changes {
		if c.Restorable {
			io.WriteString(stdout, safeText(c.Diff.Unified()))
		}
	}
	warnUnrestorable(stdout, w, id)
	return nil
}

// warnUnrestorable says which turns of session id lost content to the
// size cap.
func warnUnrestorable(out io.Writer, w *workbench.Workbench, id string) {
	if lost, err := w.Unrestorable(id); err == nil {
		printUnrestorable(out, "", lost)
	}
}

// printUnrestorable prints, after lead, that the turns lost can no longer
// be fully restored; it prints nothing when lost is empty.
func printUnrestorable(out io.Writer, lead string, lost []int) {
	if len(lost) > 0 {
		fmt.Fprintf(out, "%sWarning: turn(s) %s can no longer be fully restored: content they need was dropped to keep the checkpoints under the size cap (Settings).\n", lead, joinInts(lost))
	}
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// cmdRewind prints what rewinding a session to a turn would do, and does
// it with --yes.
func cmdRewind(args []string, stdout, stderr io.Writer) error {
	f, rest, err := takeUndoFlags("rewind", "to", args)
	if err != nil {
		return err
	}
	if !f.turnSet {
		return usagef("tally rewind: give the turn to go back to with --to N (the turn numbers are in `tally changes` and the app)")
	}
	if f.filesOnly && f.chatOnly {
		return usagef("tally rewind: --files-only and --chat-only exclude each other; give one, or neither to rewind both")
	}
	files, chat := !f.chatOnly, !f.filesOnly
	o, id, w, err := openSessionStore("rewind", rest, stderr, true)
	if err != nil {
		return err
	}
	defer w.Close()
	cfg, err := w.Config(o.sessionOptions(id))
	if err != nil && !errors.Is(err, workbench.ErrNoModel) {
		return err
	}
	var sess *agent.Session
	if o.yes {
		sess, err = w.OpenSession(cfg, id)
	} else {
		sess, err = w.InspectSession(cfg, id)
	}
	if err != nil {
		return err
	}
	defer sess.Close()
	plan, err := sess.Rewind().Plan(f.turn)
	if err != nil {
		return fmt.Errorf("tally rewind: %w", err)
	}
	if !o.yes {
		printRewindPlan(stdout, plan, files, chat)
		fmt.Fprintln(stdout, "Dry run: nothing was changed. Run again with --yes to rewind.")
		return nil
	}
	if err := rewindBlocked(stdout, plan, files, chat, f.force); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := sess.Rewind().Apply(ctx, f.turn, files, chat, f.force)
	if errors.Is(err, filehistory.ErrConflict) {
		return fmt.Errorf("tally rewind: files changed outside Tally while the rewind was being planned, so nothing was rewound; run the dry run again to review them, and add --force to overwrite them")
	}
	if err != nil {
		return fmt.Errorf("tally rewind: %w", err)
	}
	fmt.Fprintf(stdout, "Rewound to the start of turn %d: %q\n", plan.Turn.N, text.FirstLine(plan.Turn.Text, quoteRunes))
	if files {
		fmt.Fprintf(stdout, "Restored %d file(s).\n", len(res.Files.Restored))
		for _, p := range res.Files.Restored {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
		for _, s := range res.Files.Skipped {
			fmt.Fprintf(stdout, "  skipped %s\n", s)
		}
		printUnrestorable(stdout, "", plan.Unrestorable)
	}
	if chat {
		fmt.Fprintf(stdout, "Superseded %d message(s); they stay in `tally export`. The rewound message was:\n%s\n", res.Superseded, res.Text)
	}
	if res.Note != "" {
		fmt.Fprintf(stdout, "Note: %s.\n", res.Note)
	}
	return nil
}

// rewindBlocked returns why a rewind that plan describes cannot go
// through, before anything is changed: a part asked for that cannot be
// done, or files changed outside Tally without force, whose outside
// changes it prints to out for review. The rest of the dry run, diffs and
// all, is the dry run's to show.
func rewindBlocked(out io.Writer, plan rewind.Plan, files, chat, force bool) error {
	switch {
	case chat && plan.ChatErr != "":
		return fmt.Errorf("tally rewind: the conversation cannot be rewound, so nothing was changed: %s (add --files-only to restore only the files)", plan.ChatErr)
	case files && plan.FilesErr != "":
		return fmt.Errorf("tally rewind: the files cannot be restored, so nothing was changed: %s (add --chat-only to rewind only the conversation)", plan.FilesErr)
	}
	if c := plan.Conflicts(); files && !force && len(c) > 0 {
		printConflicts(out, plan)
		return fmt.Errorf("tally rewind: %s changed outside Tally since the agent wrote them, so nothing was rewound; review the outside changes above and add --force to overwrite them", strings.Join(c, ", "))
	}
	return nil
}

// printRewindPlan prints the dry run of a rewind.
func printRewindPlan(out io.Writer, p rewind.Plan, files, chat bool) {
	fmt.Fprintf(out, "Rewind to the start of turn %d: %q\n", p.Turn.N, text.FirstLine(p.Turn.Text, quoteRunes))
	if files {
		printFilePlan(out, p)
	}
	if chat {
		switch {
		case p.ChatErr != "":
			fmt.Fprintf(out, "\nConversation: cannot be rewound: %s (use --files-only).\n", p.ChatErr)
		default:
			fmt.Fprintf(out, "\nConversation: %d message(s) would be superseded (kept in the store and in `tally export`):\n", len(p.Superseded))
			for _, m := range p.Superseded {
				fmt.Fprintf(out, "  %s\n", safeText(messageLine(m)))
			}
		}
	}
	printUnrestorable(out, "\n", p.Unrestorable)
}

func printFilePlan(out io.Writer, p rewind.Plan) {
	if p.FilesErr != "" {
		fmt.Fprintf(out, "\nFiles: cannot be restored: %s\n", p.FilesErr)
		return
	}
	if len(p.Files.Files) == 0 {
		fmt.Fprintln(out, "\nFiles: the session changed no file from this turn on.")
		return
	}
	fmt.Fprintln(out, "\nFiles:")
	for _, f := range p.Files.Files {
		line := fmt.Sprintf("  %-14s %s", f.Action, f.Path)
		if f.Why != "" {
			line += " (" + f.Why + ")"
		}
		if f.Conflict && f.Action != filehistory.Unchanged && f.Action != filehistory.NotRestorable {
			line += "  CONFLICT: changed outside Tally since the agent wrote it; needs --force"
		}
		fmt.Fprintln(out, line)
	}
	printConflicts(out, p)
	fmt.Fprintln(out, "\nWhat restoring does, per file:")
	for _, f := range p.Files.Files {
		if f.Action != filehistory.Unchanged && f.Action != filehistory.NotRestorable {
			io.WriteString(out, safeText(f.Diff.Unified()))
		}
	}
}

// printConflicts prints, for each file changed outside Tally since the
// agent wrote it, its three states and the outside change.
func printConflicts(out io.Writer, p rewind.Plan) {
	for _, f := range p.Files.Files {
		if f.Conflict && f.Action != filehistory.Unchanged && f.Action != filehistory.NotRestorable {
			fmt.Fprintf(out, "\nConflict in %s:\n  at the checkpoint: %s\n  as the agent left it: %s\n  now: %s\n  changed outside Tally since the agent wrote it:\n",
				f.Path, f.Target.String(), f.Agent.String(), f.Current.String())
			io.WriteString(out, indent(safeText(f.Outside.Unified())))
		}
	}
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}

// messageLine is one superseded message in a line.
func messageLine(m transcript.Message) string {
	switch {
	case m.IsPlainUserText():
		return "[user] " + text.FirstLine(m.Body(), quoteRunes)
	case m.Role == transcript.Tool:
		return fmt.Sprintf("[%s result] %s", m.ToolName, text.FirstLine(m.Text(), quoteRunes))
	case len(m.ToolCalls) > 0:
		names := make([]string, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			names[i] = c.Name
		}
		return fmt.Sprintf("[%s] calls %s", m.Role, strings.Join(names, ", "))
	}
	return fmt.Sprintf("[%s] %s", m.Role, text.FirstLine(m.Text(), quoteRunes))
}
