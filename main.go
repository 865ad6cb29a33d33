// Command tally is a desktop workbench for running LLM coding agents against
// any OpenAI-compatible backend. Without arguments (or with only app flags
// such as --data DIR) it opens the desktop window; the subcommands run it
// headless (see `tally help`).
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tally-dev/tally/cli"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/fynecache" // before the toolkit's init: its cache duration
	"github.com/tally-dev/tally/internal/fyneprefs"
	_ "github.com/tally-dev/tally/internal/locale" // before the toolkit's init: C locales
	"github.com/tally-dev/tally/internal/sandbox"
	"github.com/tally-dev/tally/ui"
)

func main() {
	// The toolkit has read its cache duration (every package's init runs
	// before main): commands the agent runs, and the sandbox helper below,
	// need not inherit it.
	fynecache.Forget()
	// Must come first after that: in the run_shell sandbox helper (a
	// re-exec of this binary) it runs the helper and exits before any UI
	// or CLI code.
	sandbox.RunHelperIfRequested()
	args := os.Args[1:]
	if opensWindow(args) {
		repairPreferences(os.Stderr)
		// While the window is open it holds the store; the command line's
		// reading commands then run inside it.
		os.Exit(ui.Main(args, os.Stderr, func(wb *workbench.Workbench) (func(), error) { return cli.ServeReads(wb, "") }))
	}
	os.Exit(cli.Main(args, os.Stdin, os.Stdout, os.Stderr))
}

// opensWindow reports whether args ask for the desktop app: no arguments,
// or flags only (help flags excepted).
func opensWindow(args []string) bool {
	if len(args) == 0 {
		return true
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return false
	}
	return strings.HasPrefix(args[0], "-")
}

// repairPreferences makes the toolkit's preferences file of the app one
// it reads without an error before the app is made: a kill while the
// toolkit rewrote it leaves it empty (see fyneprefs.Repair). What cannot
// be repaired is said on stderr; the app opens anyway.
func repairPreferences(stderr io.Writer) {
	if _, err := fyneprefs.Repair(fyneprefs.Path(ui.AppID)); err != nil {
		fmt.Fprintln(stderr, "tally: "+err.Error())
	}
}
