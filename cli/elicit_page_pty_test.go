//go:build linux

package cli

import (
	"strings"
	"testing"
	"time"
)

// On a terminal a page shows its whole URL and host, and the user's "y"
// (they opened it) goes back as an accept.
func TestMCPCallShowsAPageOnATerminal(t *testing.T) {
	data, ws := addPageServer(t)
	ptmx, tty := openTerminal(t)
	shown := mirror(ptmx)
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"mcp", "call", "forms", "signin", "--data", data, "--workspace", ws}, tty, tty, tty)
	}()
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(shown.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("the terminal never showed %q; it shows:\n%s", want, shown.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(`The MCP server "forms" asks you to open a page in your browser:`)
	waitFor(signinPage)
	waitFor("(host: tracker.example.com;")
	waitFor("Open it yourself, then answer: [y]es, I opened it / [n]o, decline / [c]ancel: ")
	if _, err := ptmx.Write([]byte("y\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("exit %d; the terminal shows:\n%s", code, shown.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("tally mcp call did not finish; the terminal shows:\n%s", shown.String())
	}
	waitFor("got accept")
}
