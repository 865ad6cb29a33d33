package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/memory"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
)

// memoryUsage is the help of `tally memory`.
const memoryUsage = `usage:
  tally memory [list] [--workspace DIR] [--json]  entries waiting for review, and those accepted for the workspace, with their tokens
  tally memory propose SESSION                    ask the session's model for entries over its conversation
  tally memory accept ID                          remember the entry: sessions started from now on have it in their prompt
  tally memory edit ID TEXT [--kind KIND]         change a waiting entry's text (and kind: build, convention, pitfall, preference)
  tally memory reject ID|all                      drop the entry (or every waiting one); it is remembered nowhere`

// cmdMemory runs `tally memory SUBCOMMAND`.
func cmdMemory(args []string, stdout, stderr io.Writer) error {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	if sub == "propose" {
		return proposeMemory(args, stdout, stderr)
	}
	fs := flag.NewFlagSet("memory "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var data, workspace, kind string
	var asJSON bool
	fs.StringVar(&data, "data", "", "")
	fs.StringVar(&workspace, "workspace", "", "")
	fs.StringVar(&kind, "kind", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	rest, err := parseAnywhere(fs, args)
	if err != nil {
		return usagef("tally memory %s: %v\n%s", sub, err, memoryUsage)
	}
	want := map[string]int{"list": 0, "accept": 1, "reject": 1, "edit": 2}
	n, ok := want[sub]
	switch {
	case !ok:
		return usagef("tally memory: unknown subcommand %q\n%s", sub, memoryUsage)
	case len(rest) != n:
		return usagef("tally memory %s: wrong number of arguments\n%s", sub, memoryUsage)
	}
	id := 0
	if n > 0 && !(sub == "reject" && rest[0] == "all") {
		if id, err = strconv.Atoi(strings.TrimPrefix(rest[0], "#")); err != nil || id <= 0 {
			return usagef("tally memory %s: %q is not the ID of a waiting entry; run `tally memory list` to see them", sub, rest[0])
		}
	}
	o := &options{data: data, served: servedBy(stderr)}
	w, _, err := o.open()
	if err != nil {
		return err
	}
	defer w.Close()
	switch sub {
	case "accept":
		e, err := w.AcceptMemory(id)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "remembered in %s (%s in the prompt of sessions started from now on):\n  %s\n",
			safeText(e.File), text.Plural(workbench.MemoryCost(e), "token"), memoryLine(e))
		return nil
	case "edit":
		e, err := w.EditMemory(id, rest[1], memory.Kind(kind))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d  %s\nwaiting for review: accept it with `tally memory accept %d`\n", e.ID, memoryLine(e), e.ID)
		return nil
	case "reject":
		if err := w.RejectMemory(id); err != nil {
			return err
		}
		if id == 0 {
			fmt.Fprintln(stdout, "dropped every waiting entry")
		} else {
			fmt.Fprintf(stdout, "dropped entry %d; it is remembered nowhere\n", id)
		}
		return nil
	}
	if workspace, err = workDir(servedBy(stderr), workspace); err != nil {
		return fmt.Errorf("tally memory: %w; pass --workspace", err)
	}
	return listMemory(w, workspace, asJSON, stdout)
}

// memoryLine is an entry on one line: its kind and text.
func memoryLine(e memory.Entry) string {
	return fmt.Sprintf("[%s] %s", e.Kind, safeText(e.Text))
}

// memoryRow is an entry as `tally memory list --json` prints it.
type memoryRow struct {
	memory.Entry
	File   string `json:"file,omitempty"`
	Tokens int    `json:"tokens"`
}

// listMemory prints the waiting entries and those accepted for workspace,
// each with its tokens in the prefix of new sessions.
func listMemory(w *workbench.Workbench, workspace string, asJSON bool, stdout io.Writer) error {
	pending, err := w.PendingMemory()
	if err != nil {
		return err
	}
	accepted := w.AcceptedMemory(workspace)
	pendingCost, acceptedCost := make([]int, len(pending)), make([]int, len(accepted))
	for i, e := range pending {
		pendingCost[i] = workbench.MemoryCost(e)
	}
	total := 0
	if len(accepted) > 0 {
		total = workbench.MemoryHeadCost()
	}
	for i, e := range accepted {
		acceptedCost[i] = workbench.MemoryCost(e)
		total += acceptedCost[i]
	}
	if asJSON {
		out := struct {
			Pending      []memoryRow `json:"pending"`
			Accepted     []memoryRow `json:"accepted"`
			PrefixTokens int         `json:"prefix_tokens"`
		}{Pending: []memoryRow{}, Accepted: []memoryRow{}, PrefixTokens: total}
		for i, e := range pending {
			out.Pending = append(out.Pending, memoryRow{e, "", pendingCost[i]})
		}
		for i, e := range accepted {
			out.Accepted = append(out.Accepted, memoryRow{e, e.File, acceptedCost[i]})
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	if len(pending) == 0 {
		fmt.Fprintln(stdout, "No entries wait for review; `tally memory propose SESSION` asks a session's model for some.")
	} else {
		fmt.Fprintln(stdout, "Waiting for review (tally memory accept|edit|reject ID):")
	}
	for i, e := range pending {
		fmt.Fprintf(stdout, "  %-4d %8s  %s\n       from %s, in %s\n", e.ID, "+"+text.Thousands(pendingCost[i]), memoryLine(e), safeText(e.Source.String()), safeText(memoryTarget(e)))
	}
	fmt.Fprintf(stdout, "Accepted for %s (%s in the prefix of each new session):\n", safeText(workspace), text.Plural(total, "token"))
	if len(accepted) == 0 {
		fmt.Fprintln(stdout, "  none")
	}
	for i, e := range accepted {
		fmt.Fprintf(stdout, "  %13s  %s\n", text.Thousands(acceptedCost[i]), memoryLine(e))
	}
	return nil
}

// memoryTarget names the file a waiting entry goes to when accepted.
func memoryTarget(e memory.Entry) string {
	path, err := workbench.MemoryFile(e)
	if err != nil {
		return "no file (" + err.Error() + ")"
	}
	return path
}

// proposeMemory runs `tally memory propose SESSION`.
func proposeMemory(args []string, stdout, stderr io.Writer) error {
	_, w, sess, err := openSession("memory propose", args, stderr, true)
	if err != nil {
		return err
	}
	defer w.Close()
	defer sess.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p, err := w.ProposeMemory(ctx, sess)
	if err != nil {
		return err
	}
	for _, n := range p.Notes {
		fmt.Fprintln(stdout, "  note:", safeText(n))
	}
	if len(p.Entries) == 0 {
		fmt.Fprintln(stdout, "The model proposed nothing new to remember.")
		return nil
	}
	fmt.Fprintf(stdout, "Proposed %s, waiting for review (tally memory accept|edit|reject ID):\n", entries(len(p.Entries)))
	for _, e := range p.Entries {
		fmt.Fprintf(stdout, "  %-4d %8s  %s\n", e.ID, "+"+text.Thousands(workbench.MemoryCost(e)), memoryLine(e))
	}
	return nil
}

// proposeAtEnd is `tally run --propose-memory` after its turn: the model
// proposes entries, which wait for review; what it proposed (or why it
// could not) is said on stderr, and never fails the run.
func proposeAtEnd(ctx context.Context, w *workbench.Workbench, sess *agent.Session, stderr io.Writer) {
	p, err := w.ProposeMemory(ctx, sess)
	if err != nil {
		fmt.Fprintln(stderr, "memory: nothing was proposed:", safeText(message(err)))
		return
	}
	for _, n := range p.Notes {
		fmt.Fprintln(stderr, "memory: note:", safeText(n))
	}
	fmt.Fprintf(stderr, "memory: %s new, waiting for review (tally memory list)\n", entries(len(p.Entries)))
}

// entries counts memory entries: "1 entry", "2 entries".
func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return strconv.Itoa(n) + " entries"
}
