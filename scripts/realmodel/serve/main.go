// Command serve starts llama-server with SmolLM2 the way the real-model
// checks do (127.0.0.1, --jinja, seed 42, temperature 0, one slot, the
// prompt cache on) and prints the OpenAI-compatible base URL to give
// Tally; it stops the server when it is interrupted. scripts/realmodel/
// serve.sh fetches and builds what it needs first.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tally-dev/tally/internal/realmodel"
)

func main() {
	o := realmodel.ServerOptions{Log: os.Stderr}
	flag.StringVar(&o.Binary, "server", os.Getenv("REALMODEL_SERVER"), "the llama-server binary")
	flag.StringVar(&o.Model, "model", os.Getenv("REALMODEL_MODEL"), "the GGUF file")
	flag.StringVar(&o.Template, "template", "", "a chat template to use instead of the model's own (scripts/realmodel/chatml-tools.jinja gives it tool calls)")
	flag.IntVar(&o.Context, "ctx-size", 8192, "the context window in tokens")
	quiet := flag.Bool("quiet", false, "leave out the server's own log")
	flag.Parse()
	if *quiet {
		o.Log = nil
	}
	srv, err := realmodel.StartServer(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(srv.URL + "/v1")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	srv.Stop()
}
