package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/tally-dev/tally/internal/sandbox"
)

// fakeTallyEnv, when set in a re-exec of the test binary, makes it act as
// Tally running one run_shell call: the value is a fakeTallyCall in JSON.
const fakeTallyEnv = "TALLY_TEST_FAKE_TALLY"

// fakeTallyCall is the run_shell call a fake Tally makes.
type fakeTallyCall struct {
	Workspace string `json:"workspace"`
	Command   string `json:"command"`
}

func TestMain(m *testing.M) {
	// The test binary serves as the sandbox helper, as Tally's binary does.
	sandbox.RunHelperIfRequested()
	if v := os.Getenv(fakeTallyEnv); v != "" {
		os.Exit(fakeTally(v))
	}
	os.Exit(m.Run())
}

// fakeTally runs the call described by v and prints the result.
func fakeTally(v string) int {
	var c fakeTallyCall
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	args, _ := json.Marshal(map[string]any{"command": c.Command, "timeout_seconds": 600})
	res := RunShell().Run(context.Background(), &Env{Workspace: c.Workspace}, args)
	fmt.Println(res.Content)
	return 0
}
