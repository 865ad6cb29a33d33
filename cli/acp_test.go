package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestACPRefusesWhatTheEditorDecides: the session, the workspace, the
// approvals and the output belong to the editor.
func TestACPRefusesWhatTheEditorDecides(t *testing.T) {
	for _, args := range [][]string{{"acp", "--yes"}, {"acp", "--json"}, {"acp", "--session", "x"}, {"acp", "--workspace", "/tmp"}, {"acp", "--add-dir", "/tmp"}, {"acp", "extra"}} {
		if _, errOut, code := runCLI(t, append(args, "--data", t.TempDir())...); code != ExitUsage || !strings.Contains(errOut, "tally acp:") {
			t.Errorf("%v: exit %d, %q; want a usage error", args, code, errOut)
		}
	}
}

// TestACPAnswersOnStandardOutput: a client that writes its request and
// closes its end still gets the answer, and standard output carries
// nothing but the protocol.
func TestACPAnswersOnStandardOutput(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"
	var out, errb strings.Builder
	if code := Main([]string{"acp", "--data", t.TempDir()}, strings.NewReader(in), &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			ProtocolVersion   int `json:"protocolVersion"`
			AgentCapabilities struct {
				LoadSession bool `json:"loadSession"`
			} `json:"agentCapabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out.String()), &resp); err != nil {
		t.Fatalf("stdout is not one JSON-RPC message: %q", out.String())
	}
	if resp.ID != 1 || resp.Result.ProtocolVersion != 1 || !resp.Result.AgentCapabilities.LoadSession {
		t.Errorf("initialize answered %+v", resp)
	}
}
