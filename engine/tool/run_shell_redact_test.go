package tool

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/secrets/secretstest"
)

// Long command output is cut to a head and a tail; a secret straddling
// either cut used to leave a prefix behind that no rule recognised.
func TestRunShellRedactsSecretsAcrossTheCut(t *testing.T) {
	token := secretstest.New(3).GitHubPAT
	_, env := newWorkspace(t, nil)
	env.OutputLimit = 4096
	for _, at := range []int{env.OutputLimit/2 - 10, 20} { // across the head cut; across the tail cut from the end
		var cmd string
		if at == 20 {
			cmd = "head -c 20000 /dev/zero | tr '\\0' y; printf 'GITHUB_TOKEN=" + token + "'; head -c " + strconv.Itoa(at) + " /dev/zero | tr '\\0' z"
		} else {
			cmd = "head -c " + strconv.Itoa(at) + " /dev/zero | tr '\\0' x; printf 'GITHUB_TOKEN=" + token + "'; head -c 20000 /dev/zero | tr '\\0' y"
		}
		res := call(t, RunShell(), env, map[string]any{"command": cmd})
		if strings.Contains(res.Content, token[:10]) {
			t.Errorf("cut at %d: part of the token survived:\n%s", at, res.Content[max(0, strings.Index(res.Content, token[:10])-40):])
		}
	}
}
