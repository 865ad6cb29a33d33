package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/remote"
)

// The app holds the store's exclusive lock while it is open. Reading
// commands then run inside the app, against its open store, over the
// socket of internal/remote; writing commands say that the app holds the
// data.

// readingCommands are the commands that only read the store and may run
// inside the app. A rewind's dry run reads too (see reads).
var readingCommands = map[string]bool{
	"sessions": true, "inspect": true, "export": true, "preview": true,
	"archive": true, "changes": true, "help": true,
}

// reads reports whether the command line args only reads the store: a
// reading command, a rewind without --yes, whose dry run opens the
// session read-only, or a search without --reindex.
func reads(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "rewind":
		return rewindDryRun(args[1:])
	case "search":
		reindex, _, err := takeReindex(args[1:])
		return err == nil && !reindex
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

// heldByApp runs a command whose store another Tally holds: a reading
// command is passed to that Tally when it serves requests; otherwise the
// error says who holds the data and what to do. handled is false when the
// error is not about the lock.
func heldByApp(args []string, err error, stdout, stderr io.Writer) (code int, handled bool) {
	if !errors.Is(err, workbench.ErrLocked) {
		return 0, false
	}
	dir, derr := dataDirOf(args)
	if derr != nil {
		return 0, false
	}
	if !reads(args) {
		if !remote.Serving(dir) {
			return 0, false // another command holds it: the lock's own error says so
		}
		fmt.Fprintf(stderr, "tally %s: the Tally app has this data open and holds its sessions; run it there, or close the app and try again\n", args[0])
		return ExitFail, true
	}
	code, cerr := remote.Call(dir, args, stdout, stderr)
	if errors.Is(cerr, remote.ErrNoServer) {
		return 0, false // not the app (another command, an older Tally): the lock's own error says it
	}
	if cerr != nil {
		fmt.Fprintf(stderr, "tally %s: another Tally holds the data in %s and does not answer (%s); close it and try again\n", args[0], dir, message(cerr))
		return ExitFail, true
	}
	return code, true
}

// ServeReads lets command-line processes run reading commands against
// wb, the app's open workbench of dataDir, while the app holds the store;
// stop ends it. Writing commands sent this way are refused. Commands run
// concurrently, each on its own borrowed view of wb.
func ServeReads(wb *workbench.Workbench, dataDir string) (stop func(), err error) {
	if dataDir == "" {
		dataDir = filepath.Dir(wb.Path())
	}
	return remote.Serve(dataDir, func(args []string, stdout, stderr io.Writer) int {
		if !reads(args) {
			fmt.Fprintf(stderr, "tally %s: the Tally app has this data open and holds its sessions; run it there, or close the app and try again\n", args[0])
			return ExitFail
		}
		return Main(args, strings.NewReader(""), stdout, servedStderr{Writer: stderr, wb: wb})
	})
}

// servedStderr is the standard error of a command the app runs for the
// command line: it carries the app's workbench to the command's options
// (see parse), so each served command, and only it, uses the app's open
// store.
type servedStderr struct {
	io.Writer
	wb *workbench.Workbench
}

// servedBy is the app workbench a served command's stderr carries, or nil
// in a command-line process.
func servedBy(stderr io.Writer) *workbench.Workbench {
	if s, ok := stderr.(servedStderr); ok {
		return s.wb
	}
	return nil
}
