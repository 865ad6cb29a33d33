package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/engine/workbench"
)

// hooksUsage is the help of `tally hooks`.
const hooksUsage = `usage:
  tally hooks [list] [--workspace DIR] [--json]   the hooks sessions opened now would run (yours, then the workspace's), and those waiting for trust
  tally hooks trust [--workspace DIR]             run the hooks of the workspace's .tally/hooks.json (never without this)
  tally hooks untrust [--workspace DIR]           stop running them`

// cmdHooks runs `tally hooks SUBCOMMAND`.
func cmdHooks(args []string, stdout io.Writer) error {
	sub := "list"
	if len(args) > 0 && (args[0] == "list" || args[0] == "trust" || args[0] == "untrust") {
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("hooks "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var data, workspace string
	var asJSON bool
	fs.StringVar(&data, "data", "", "")
	fs.StringVar(&workspace, "workspace", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	rest, err := parseAnywhere(fs, args)
	if err != nil {
		return usagef("tally hooks %s: %v\n%s", sub, err, hooksUsage)
	}
	if len(rest) > 0 {
		return usagef("tally hooks: unexpected argument %q\n%s", rest[0], hooksUsage)
	}
	if workspace == "" {
		if workspace, err = os.Getwd(); err != nil {
			return fmt.Errorf("tally hooks: cannot read the current folder (%w); pass --workspace", err)
		}
	}
	o := &options{data: data}
	w, _, err := o.open()
	if err != nil {
		return err
	}
	defer w.Close()
	switch sub {
	case "trust":
		return hooksTrust(w, workspace, stdout)
	case "untrust":
		if err := w.UntrustHooks(workspace); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "the hooks of %s no longer run\n", safeText(hooks.WorkspacePath(workspace)))
		return nil
	}
	list, err := w.Hooks(workspace, nil)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(list)
	}
	if len(list.Hooks) == 0 {
		fmt.Fprintf(stdout, "no hooks; add them to %s or the workspace's .tally/hooks.json (see the README's Hooks section)\n", safeText(list.UserPath))
	}
	for _, h := range list.Hooks {
		fmt.Fprintln(stdout, hookLine(h))
	}
	if list.Workspace.NeedsTrust {
		fmt.Fprintf(stdout, "the workspace's hooks do not run until you trust %s: review it, then `tally hooks trust --workspace %s`\n",
			safeText(list.Workspace.Path), safeText(workspace))
	}
	for _, n := range list.Notes {
		fmt.Fprintf(stdout, "note: %s\n", safeText(n))
	}
	return nil
}

// hookLine is one hook of the list: source, event, matcher, timeout and
// command, tab-separated.
func hookLine(h workbench.HookEntry) string {
	source := string(h.Source)
	if h.Source == hooks.SourceWorkspace && !h.Trusted {
		source += " (not trusted)"
	}
	matcher := h.Matcher
	if matcher == "" {
		matcher = "*"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", source, h.Event, safeText(matcher), h.Limit(), safeText(h.Command))
}

// hooksTrust trusts the workspace's hooks file as it is now and lists
// what will run.
func hooksTrust(w *workbench.Workbench, workspace string, stdout io.Writer) error {
	wf, err := w.HooksWorkspaceFile(workspace)
	if err != nil {
		return err
	}
	if wf.Path == "" {
		return fmt.Errorf("tally hooks trust: %s has no hooks file (%s)", workspace, hooks.WorkspacePath(workspace))
	}
	if err := w.TrustHooks(workspace, wf.Hash); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "trusted %s; sessions opened from now on run:\n", safeText(wf.Path))
	for _, h := range wf.Preview {
		fmt.Fprintln(stdout, "  "+hookLine(workbench.HookEntry{Hook: h, Trusted: true}))
	}
	return nil
}
