package agent

import (
	"encoding/json"
	"fmt"

	"github.com/tally-dev/tally/storage"
)

// mcpTrustKey is the store setting holding the trusted workspace MCP
// files: for each workspace, the fingerprint (mcp.Fingerprint) of the
// content the user trusted.
const mcpTrustKey = "mcp_trust"

type mcpTrust struct {
	Workspaces map[string]string `json:"workspaces"`
}

func readMCPTrust(st *storage.Store) (mcpTrust, error) {
	var t mcpTrust
	data, err := st.Setting(mcpTrustKey)
	if err != nil {
		return t, err
	}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &t); err != nil {
			return t, fmt.Errorf("the trusted MCP files in the store are unreadable (%w); trust the workspace's MCP file again", err)
		}
	}
	return t, nil
}

// TrustMCP records that the user trusts the MCP file of workspace whose
// content has the fingerprint hash: the workspace's servers then run in
// sessions opened from now on, until the file changes. An empty hash
// withdraws the trust. Only the latest trusted content of a workspace is
// kept.
func TrustMCP(st *storage.Store, workspace, hash string) error {
	abs, err := checkWorkspace(workspace)
	if err != nil {
		return err
	}
	return st.Update(func(tx *storage.Tx) error {
		var t mcpTrust
		if data, err := tx.Setting(mcpTrustKey); err != nil {
			return err
		} else if len(data) > 0 {
			_ = json.Unmarshal(data, &t) // unreadable: start over
		}
		if t.Workspaces == nil {
			t.Workspaces = map[string]string{}
		}
		if hash == "" {
			delete(t.Workspaces, abs)
		} else {
			t.Workspaces[abs] = hash
		}
		data, err := json.Marshal(t)
		if err != nil {
			return err
		}
		return tx.PutSetting(mcpTrustKey, data)
	})
}

// MCPTrusted returns the fingerprint of the workspace MCP file content the
// user trusted, or "" when none.
func MCPTrusted(st *storage.Store, workspace string) (string, error) {
	abs, err := checkWorkspace(workspace)
	if err != nil {
		return "", err
	}
	t, err := readMCPTrust(st)
	if err != nil {
		return "", err
	}
	return t.Workspaces[abs], nil
}
