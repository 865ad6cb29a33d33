package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/tally-dev/tally/acp"
	"github.com/tally-dev/tally/engine/workbench"
)

// cmdACP serves the Agent Client Protocol on stdin and stdout for a code
// editor (Zed, JetBrains, Neovim plugins) until stdin ends. Diagnostics go
// to stderr; stdout carries the protocol alone.
func cmdACP(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parse("acp", args, stderr)
	if err != nil {
		return err
	}
	switch {
	case len(o.args) > 0:
		return usagef("tally acp: takes no arguments; the editor starts it and speaks the protocol on standard input and output")
	case o.session != "" || o.workspace != "":
		return usagef("tally acp: --session and --workspace come from the editor (session/load and the project's folder); leave them out")
	case o.yes || o.json:
		return usagef("tally acp: approvals are answered in the editor and events go to it; leave out --yes and --json (pick a mode with --mode or in the editor)")
	}
	if stdout == io.Writer(os.Stdout) {
		// The protocol owns standard output: anything else that would
		// print there goes to stderr instead.
		os.Stdout = os.Stderr
		defer func() { os.Stdout = stdout.(*os.File) }()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return acp.Serve(ctx, stdin, stdout, acp.Options{
		Open:    func() (*workbench.Workbench, error) { return openForACP(o) },
		Session: o.sessionOptions,
		Version: version(),
		Log:     stderr,
	})
}

// openForACP opens the store without waiting for its lock: while the app
// or another command holds it the editor gets a sentence saying so at
// once, and the next session/new tries again.
func openForACP(o *options) (*workbench.Workbench, error) {
	w, settingsErr, err := workbench.TryOpen(o.data, os.Getenv)
	if errors.Is(err, workbench.ErrLocked) {
		dir, derr := workbench.DataPath(o.data)
		if derr != nil {
			dir = "the data directory"
		}
		return nil, fmt.Errorf("another Tally (the app, a tally run or another tally acp) has %s open; close it and try again, or give the editor its own data with --data DIR in the agent server's args", dir)
	}
	if err != nil {
		return nil, err
	}
	if settingsErr != nil {
		w.Close()
		return nil, settingsErr
	}
	return w, nil
}

// version is the module version Tally was built as, "dev" for a build
// from a work tree.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
