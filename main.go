// Command tally is a desktop workbench for running LLM coding agents against
// any OpenAI-compatible backend. Without arguments it opens the app; the
// subcommands run it headless (see `tally help`).
package main

import (
	"os"

	"github.com/tally-dev/tally/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
