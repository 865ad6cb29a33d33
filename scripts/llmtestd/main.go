// Command llmtestd serves Tally's scripted demo model over HTTP for the
// smoke test: it prints the OpenAI-compatible base URL on standard output
// and serves until it is killed. With --workspace DIR it first writes the
// demo's sample project into DIR; --pace D pauses before each answer.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/demo/demoserver"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	_ "github.com/tally-dev/tally/engine/llm/llmtest/chattemplates"
)

func main() {
	ws := flag.String("workspace", "", "write the demo's sample project into this folder first")
	pace := flag.Duration("pace", 0, "pause before each answer, to watch turns run (e.g. 1s)")
	flag.Parse()
	if *ws != "" {
		if err := demo.NewWorkspace(*ws); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	srv := llmtest.New(demoserver.Script(*pace))
	defer srv.Close()
	fmt.Println(srv.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}
