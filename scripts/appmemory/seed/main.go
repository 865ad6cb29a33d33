// Command seed stores a long session for scripts/appmemory: with --data
// DIR and --workspace WS it writes a session of --messages messages into
// DIR's store and prints its ID.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tally-dev/tally/engine/agent/longsession"
)

func main() {
	data := flag.String("data", "", "the data directory to store the session in")
	ws := flag.String("workspace", "", "the session's workspace, an existing folder")
	n := flag.Int("messages", 10_000, "how many messages the session has")
	flag.Parse()
	if *data == "" || *ws == "" {
		fmt.Fprintln(os.Stderr, "seed needs --data DIR and --workspace DIR; see scripts/appmemory/run.sh")
		os.Exit(2)
	}
	id, err := longsession.Seed(*data, *ws, *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
	fmt.Println(id)
}
