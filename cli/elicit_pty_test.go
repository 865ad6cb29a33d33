//go:build linux

package cli

import (
	"os"
	"strings"
	"testing"
	"time"
)

// On a terminal a form is a row of questions, each with its default in
// brackets: Enter keeps it, a wrong answer is said and asked again, a
// choice is picked by its number, and the answers go when the user says
// so.
func TestMCPCallAsksTheFormOnATerminal(t *testing.T) {
	data, ws := addFormServer(t, signupSchema)
	ptmx, tty := openTerminal(t)
	shown := mirror(ptmx)
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"mcp", "call", "forms", "signup", "--data", data, "--workspace", ws}, tty, tty, tty)
	}()
	seen := 0
	// see waits until the terminal shows want after what was seen so far.
	see := func(want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := shown.String()
			if i := strings.Index(s[seen:], want); i >= 0 {
				seen += i + len(want)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the terminal never showed %q; it shows:\n%s", want, s)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// expect sees want, then types answer and Enter.
	expect := func(want, answer string) {
		t.Helper()
		see(want)
		if _, err := ptmx.Write([]byte(answer + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	see(`The MCP server "forms" asks you to fill in a form:`)
	expect(`age (a whole number from 0 to 150) [30]: `, "old")
	see(`"age" must be a whole number, such as 3`)
	expect(`age (a whole number from 0 to 150) [30]: `, "42")
	expect(`Name* [John Doe]: `, "")
	expect(`Newsletter [Y/n]: `, "n")
	see(`3) team`)
	expect(`plan (a number or a value) [free]: `, "3")
	expect(`Send these answers? [Y]es / [n]o, decline / [c]ancel: `, "")
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("exit %d; the terminal shows:\n%s", code, shown.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("tally mcp call did not finish; the terminal shows:\n%s", shown.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	want := `got accept {"age":42,"name":"John Doe","news":false,"plan":"team"}`
	for !strings.Contains(shown.String(), want) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(shown.String(), want) {
		t.Errorf("the server did not get the answers; the terminal shows:\n%s", shown.String())
	}
}

// mirror copies what the terminal shows into a buffer, until it closes.
func mirror(ptmx *os.File) *syncBuffer {
	shown := &syncBuffer{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			shown.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	return shown
}
