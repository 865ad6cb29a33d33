package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
)

// openSession opens a stored session for a maintenance command; withModel
// says whether the command may call the model (then an endpoint is needed).
// The caller closes the workbench.
func openSession(name string, args []string, stderr io.Writer, withModel bool) (*options, *workbench.Workbench, *agent.Session, error) {
	o, id, w, err := openSessionStore(name, args, stderr, true)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := w.Config(o.sessionOptions(id))
	if err != nil && (withModel || !errors.Is(err, workbench.ErrNoModel)) {
		w.Close()
		return nil, nil, nil, err
	}
	var sess *agent.Session
	if withModel {
		sess, err = w.OpenSession(cfg, id)
	} else {
		sess, err = w.InspectSession(cfg, id)
	}
	if err != nil {
		w.Close()
		return nil, nil, nil, err
	}
	return o, w, sess, nil
}

func cmdPreview(args []string, stdout, stderr io.Writer) error {
	o, w, sess, err := openSession("preview", args, stderr, false)
	if err != nil {
		return err
	}
	defer w.Close()
	plan, err := sess.Compaction().Preview()
	if err != nil {
		return err
	}
	if o.json {
		_, err = stdout.Write(append(plan.JSON(), '\n'))
		return err
	}
	_, err = io.WriteString(stdout, plan.Text())
	return err
}

func cmdCompact(args []string, stdout, stderr io.Writer) error {
	o, w, sess, err := openSession("compact", args, stderr, true)
	if err != nil {
		return err
	}
	defer w.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := sess.Compaction().Apply(ctx)
	if err != nil {
		return err
	}
	return reportCompaction(stdout, o.json, sess.Snapshot().Meta.ID, res)
}

// reportCompaction prints what compacting session id did, as a line or,
// with asJSON, as the result's JSON.
func reportCompaction(stdout io.Writer, asJSON bool, id string, res rewrite.Result) error {
	if asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	how := "cheap layers only (no model call)"
	switch res.Source {
	case "summary":
		how = "summary written by the model, merged into the system prompt"
	case "memory":
		how = "MEMORY.md used as the summary"
	}
	fmt.Fprintf(stdout, "compacted %s: %d → %d tokens; %s\n", id, res.TokensBefore, res.TokensAfter, how)
	return nil
}

func cmdArchive(args []string, stdout, stderr io.Writer) error {
	o, err := parse("archive", args, stderr)
	if err != nil {
		return err
	}
	if len(o.args) < 1 || len(o.args) > 2 {
		return usagef("tally archive: give a session ID and optionally a cycle number")
	}
	id := o.args[0]
	w, _, err := o.open()
	if err != nil {
		return err
	}
	defer w.Close()
	if err := checkSession(w, "archive", id); err != nil {
		return err
	}
	arch, err := w.Archives(id)
	if err != nil {
		return err
	}
	if len(o.args) == 1 {
		if o.json {
			enc := json.NewEncoder(stdout)
			for _, a := range arch {
				a.Messages = nil
				if err := enc.Encode(a); err != nil {
					return err
				}
			}
			return nil
		}
		if len(arch) == 0 {
			fmt.Fprintf(stdout, "session %s has no archived cycles yet\n", id)
			return nil
		}
		for _, a := range arch {
			fmt.Fprintf(stdout, "cycle %d\t%s – %s\t%d tokens\t%d requests\t%d messages\t%s\n", a.Cycle,
				a.Started.Local().Format("2006-01-02 15:04"), a.Ended.Local().Format("2006-01-02 15:04"),
				a.Tokens, a.Requests, len(a.Messages), text.FirstLine(a.Brief, quoteRunes))
		}
		return nil
	}
	n, err := strconv.Atoi(o.args[1])
	if err != nil {
		return usagef("tally archive: %q is not a cycle number", o.args[1])
	}
	for _, a := range arch {
		if a.Cycle != n {
			continue
		}
		if o.json {
			return json.NewEncoder(stdout).Encode(a)
		}
		printArchive(stdout, a)
		return nil
	}
	return fmt.Errorf("tally archive: session %s has no archived cycle %d; run `tally archive %s` to list them", id, n, id)
}

func printArchive(w io.Writer, a cycle.Archive) {
	fmt.Fprintf(w, "Cycle %d · %s – %s · %d tokens · %d requests\n\nHand-off brief:\n%s\n\nMessages:\n",
		a.Cycle, a.Started.Local().Format(time.DateTime), a.Ended.Local().Format(time.DateTime), a.Tokens, a.Requests, a.Brief)
	for i, m := range a.Messages {
		fmt.Fprintf(w, "[%s] %s\n", cycle.Handle(a.Cycle, i), strings.TrimSpace(cycle.MessageText(m)))
	}
}

func cmdPurge(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, w, sess, err := openSession("purge", args, stderr, true)
	if err != nil {
		return err
	}
	defer w.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p, err := sess.Purge().Preview(ctx)
	if err != nil {
		return err
	}
	io.WriteString(stdout, p.Text())
	for _, e := range p.Errors {
		fmt.Fprintln(stdout, "  ignored:", e)
	}
	if len(p.Changes) == 0 {
		return nil
	}
	apply := o.yes
	if !apply {
		if f, ok := terminalIn(stdin); ok {
			fmt.Fprint(stderr, "Apply this purge? [y/N] ")
			line, _ := bufio.NewReader(f).ReadString('\n')
			apply = strings.EqualFold(strings.TrimSpace(line), "y")
		}
	}
	if !apply {
		fmt.Fprintln(stdout, "Not applied. Run again with --yes to apply a purge without asking.")
		return nil
	}
	if err := sess.Purge().Apply(p); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Applied: %d → %d tokens.\n", p.Before, p.After)
	return nil
}
