package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/tally-dev/tally/engine/workbench"
)

// workspaceCmd is a parsed `tally NAME [list|trust|untrust] [--workspace
// DIR] [--json] [--data DIR]`, the shape of the commands about what a
// workspace ships (skills, hooks), with the data directory open; the
// caller closes w.
type workspaceCmd struct {
	sub, workspace string
	json           bool
	w              *workbench.Workbench
}

// parseWorkspaceCmd parses args of `tally name`; usage is its help, and
// stderr the command's (see servedBy).
func parseWorkspaceCmd(name, usage string, args []string, stderr io.Writer) (*workspaceCmd, error) {
	c := &workspaceCmd{sub: "list"}
	if len(args) > 0 && (args[0] == "list" || args[0] == "trust" || args[0] == "untrust") {
		c.sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet(name+" "+c.sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var data string
	fs.StringVar(&data, "data", "", "")
	fs.StringVar(&c.workspace, "workspace", "", "")
	fs.BoolVar(&c.json, "json", false, "")
	rest, err := parseAnywhere(fs, args)
	if err != nil {
		return nil, usagef("tally %s %s: %v\n%s", name, c.sub, err, usage)
	}
	if len(rest) > 0 {
		return nil, usagef("tally %s: unexpected argument %q\n%s", name, rest[0], usage)
	}
	if c.workspace, err = workDir(servedBy(stderr), c.workspace); err != nil {
		return nil, fmt.Errorf("tally %s: %w; pass --workspace", name, err)
	}
	o := &options{data: data, served: servedBy(stderr)}
	if c.w, _, err = o.open(); err != nil {
		return nil, err
	}
	return c, nil
}
