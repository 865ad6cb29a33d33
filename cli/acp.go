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
	"github.com/tally-dev/tally/internal/remote"
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
	case o.session != "" || o.workspace != "" || o.addDirs != nil:
		return usagef("tally acp: --session, --workspace and --add-dir come from the editor (session/load, the project's folder and its additional directories); leave them out")
	case o.yes || o.json:
		return usagef("tally acp: approvals are answered in the editor and events go to it; leave out --yes and --json (pick a mode with --mode or in the editor)")
	}
	if o.served != nil {
		// Inside the app, for a tally acp the editor started (see
		// relayACP): its sessions are the app's, until the editor's
		// input ends or the app closes.
		return acp.Serve(context.Background(), stdin, stdout, acp.Options{
			Open: func() (*workbench.Workbench, error) {
				return o.served.borrow(workbench.Holder{Where: "an editor connected with tally acp", Free: "close it in the editor and try again"}), nil
			},
			Session:    o.sessionOptions,
			Version:    version(),
			Log:        stderr,
			FetchLocal: o.fetchLocal,
			Network:    o.network,
		})
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
		Open:       func() (*workbench.Workbench, error) { return openForACP(o) },
		Session:    o.sessionOptions,
		Version:    version(),
		Log:        stderr,
		FetchLocal: o.fetchLocal,
		Network:    o.network,
	})
}

// relayACP runs `tally acp` args inside the desktop app when the app has
// the data open: the app opens the sessions and runs their turns, and
// this process passes the protocol between the editor and the app. ok is
// false when no app serves the data; then the command runs here.
func relayACP(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, ok bool) {
	if servedBy(stderr) != nil {
		return 0, false // this is the app
	}
	dir, err := dataDirOf(args)
	if err != nil || !remote.Serving(dir) {
		return 0, false
	}
	code, err = remote.Call(dir, request(args), stdin, stdout, stderr)
	if errors.Is(err, remote.ErrNoServer) {
		return 0, false // the app closed meanwhile
	}
	if err != nil {
		fmt.Fprintf(stderr, "tally acp: the Tally app stopped answering (%s); restart the agent in the editor\n", message(err))
		return ExitFail, true
	}
	return code, true
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
		if appServes(o.data) {
			return nil, fmt.Errorf("the Tally app opened %s after the editor started tally acp; restart the agent in the editor, and its sessions then run in the app", dir)
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
