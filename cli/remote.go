package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/remote"
)

// The app holds the store's exclusive lock while it is open. Reading
// commands then run inside the app, against its open store, over the
// socket of internal/remote, with the client's folder and environment;
// `tally acp` runs there whole (see relayACP); writing commands say that
// the app holds the data.

// readingCommands are the commands that only read the store and may run
// inside the app. Commands with subcommands, a rewind's dry run and a
// search read too (see reads).
var readingCommands = map[string]bool{
	"sessions": true, "inspect": true, "export": true, "preview": true,
	"archive": true, "changes": true, "help": true,
}

// reads reports whether the command line args only reads the store: a
// reading command; a listing (mcp list, skills [list], hooks [list],
// profile [list]); a worktree diff; a rewind without --yes, whose dry
// run opens the session read-only; or a search without --reindex.
func reads(args []string) bool {
	if len(args) == 0 {
		return false
	}
	sub := ""
	if len(args) > 1 {
		sub = args[1]
	}
	switch args[0] {
	case "rewind":
		return rewindDryRun(args[1:])
	case "search":
		reindex, _, err := takeReindex(args[1:])
		return err == nil && !reindex
	case "mcp":
		return sub == "list"
	case "skills", "hooks":
		return sub != "trust" && sub != "untrust" // list, the default
	case "profile", "profiles":
		p, err := parseProfile(args[1:])
		return err == nil && p.sub == "list"
	case "worktree":
		return sub == "diff"
	case "memory":
		return sub == "" || sub == "list" || strings.HasPrefix(sub, "-")
	}
	return readingCommands[args[0]]
}

// rewindDryRun reports whether rewind args parse and ask for a dry run
// (no --yes, in any of the forms the flags accept).
func rewindDryRun(args []string) bool {
	_, rest, err := takeUndoFlags("rewind", "to", args)
	if err != nil {
		return false
	}
	o, err := parse("rewind", rest, io.Discard)
	return err == nil && !o.yes
}

// commandName is how an error names the command of args: "tally mcp
// trust", "tally run".
func commandName(args []string) string {
	if len(args) > 1 && slices.Contains([]string{"mcp", "skills", "hooks", "profile", "profiles", "worktree", "memory"}, args[0]) && !strings.HasPrefix(args[1], "-") {
		return "tally " + args[0] + " " + args[1]
	}
	return "tally " + args[0]
}

// refusedBeside is the error of a command that changes data the app holds.
func refusedBeside(args []string) string {
	name := commandName(args)
	what := "do this in the app, or close the app and run the command again"
	if name == "tally mcp call" || name == "tally search" { // the app has no such action
		what = "close the app and run the command again"
	}
	return name + ": the Tally app has this data open, and only commands that read it run beside the app; " + what
}

// appServes reports whether the desktop app serves the data directory
// dataDir names ("" for the default) on its socket.
func appServes(dataDir string) bool {
	path, err := workbench.DataPath(dataDir)
	return err == nil && remote.Serving(filepath.Dir(path))
}

// dataDirOf is the data directory args name (--data DIR, env TALLY_DATA,
// or the default), where the store and the app's socket live.
func dataDirOf(args []string) (string, error) {
	dir := os.Getenv("TALLY_DATA")
	for i, a := range args {
		switch {
		case a == "--data" || a == "-data":
			if i+1 < len(args) {
				dir = args[i+1]
			}
		case strings.HasPrefix(a, "--data="):
			dir = strings.TrimPrefix(a, "--data=")
		}
	}
	path, err := workbench.DataPath(dir)
	if err != nil {
		return "", err
	}
	return filepath.Dir(path), nil
}

// request is args as a request to the app: with this process's folder
// and environment, which the command then uses as its own.
func request(args []string) remote.Request {
	dir, _ := os.Getwd()
	return remote.Request{Args: args, Dir: dir, Env: os.Environ()}
}

// heldByApp runs a command whose store another Tally holds: a reading
// command is passed to that Tally when it serves requests; otherwise the
// error says who holds the data and what to do. handled is false when the
// error is not about the lock.
func heldByApp(args []string, err error, stdout, stderr io.Writer) (code int, handled bool) {
	if !errors.Is(err, workbench.ErrLocked) || servedBy(stderr) != nil {
		return 0, false // inside the app, a command never asks the app
	}
	dir, derr := dataDirOf(args)
	if derr != nil {
		return 0, false
	}
	if !reads(args) {
		if !remote.Serving(dir) {
			return 0, false // another command holds it: the lock's own error says so
		}
		fmt.Fprintln(stderr, refusedBeside(args))
		return ExitFail, true
	}
	code, cerr := remote.Call(dir, request(args), nil, stdout, stderr)
	if errors.Is(cerr, remote.ErrNoServer) {
		return 0, false // not the app (another command, an older Tally): the lock's own error says it
	}
	if cerr != nil {
		fmt.Fprintf(stderr, "tally %s: another Tally holds the data in %s and does not answer (%s); close it and try again\n", args[0], dir, message(cerr))
		return ExitFail, true
	}
	return code, true
}

// ServeReads lets command-line processes run reading commands, and
// `tally acp`, against wb, the app's open workbench of dataDir, while the
// app holds the store; stop ends it. Writing commands sent this way are
// refused. Commands run concurrently, each on its own borrowed view of wb
// with its client's folder and environment.
func ServeReads(wb *workbench.Workbench, dataDir string) (stop func(), err error) {
	if dataDir == "" {
		dataDir = filepath.Dir(wb.Path())
	}
	return remote.Serve(dataDir, func(req remote.Request, stdin io.Reader, stdout, stderr io.Writer) int {
		if !reads(req.Args) && req.Args[0] != "acp" {
			fmt.Fprintln(stderr, refusedBeside(req.Args))
			return ExitFail
		}
		return Main(req.Args, stdin, stdout, servedStderr{Writer: stderr, s: newServed(wb, req)})
	})
}

// served is what a command the app runs for another process works with:
// the app's workbench, and the client's folder and environment.
type served struct {
	wb  *workbench.Workbench
	dir string
	env map[string]string
}

func newServed(wb *workbench.Workbench, req remote.Request) *served {
	s := &served{wb: wb, dir: req.Dir, env: make(map[string]string, len(req.Env))}
	for _, kv := range req.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			s.env[k] = v
		}
	}
	return s
}

// getenv looks a variable up in the client's environment.
func (s *served) getenv(k string) string { return s.env[k] }

// borrow is the view of the app's workbench the command uses, as h (see
// workbench.Borrow).
func (s *served) borrow(h workbench.Holder) *workbench.Workbench {
	return s.wb.Borrow(h, s.getenv)
}

// servedStderr is the standard error of a command the app runs for the
// command line: it carries the app's workbench and the client's folder
// and environment to the command (see parse), so each served command, and
// only it, uses the app's open store.
type servedStderr struct {
	io.Writer
	s *served
}

// servedBy is what a served command's stderr carries, or nil in a
// command-line process.
func servedBy(stderr io.Writer) *served {
	if s, ok := stderr.(servedStderr); ok {
		return s.s
	}
	return nil
}

// workDir is the folder p names for a command: p itself, or when p is ""
// the current folder; when the app runs the command for another process
// (s is not nil), relative to that process's folder.
func workDir(s *served, p string) (string, error) {
	switch {
	case s == nil && p != "":
		return p, nil
	case s == nil:
		dir, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("the current folder cannot be read (%w)", err)
		}
		return dir, nil
	case filepath.IsAbs(p):
		return p, nil
	case s.dir == "":
		return "", errors.New("the command's folder did not reach the app")
	}
	return filepath.Join(s.dir, p), nil
}

// commandHolder holds what a command the app runs for the command line
// opens: reading commands open sessions read-only, so never a session.
var commandHolder = workbench.Holder{Where: "a tally command", Free: "wait for it to end and try again"}
