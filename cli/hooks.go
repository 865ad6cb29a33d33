package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/engine/workbench"
)

// hooksUsage is the help of `tally hooks`.
const hooksUsage = `usage:
  tally hooks [list] [--workspace DIR] [--json]   the hooks sessions opened now would run (yours, then the workspace's), and those waiting for trust
  tally hooks trust [--workspace DIR]             run the hooks of the workspace's .tally/hooks.json (never without this)
  tally hooks untrust [--workspace DIR]           stop running them`

// cmdHooks runs `tally hooks SUBCOMMAND`.
func cmdHooks(args []string, stdout, stderr io.Writer) error {
	c, err := parseWorkspaceCmd("hooks", hooksUsage, args, stderr)
	if err != nil {
		return err
	}
	defer c.w.Close()
	sub, workspace, asJSON, w := c.sub, c.workspace, c.json, c.w
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
		fmt.Fprintf(stdout, "no hooks; add them to %s or the workspace's .tally/hooks.json (see docs/hooks.md)\n", safeText(list.UserPath))
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
