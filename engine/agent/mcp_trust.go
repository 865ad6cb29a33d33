package agent

import (
	"encoding/json"
	"fmt"

	"github.com/tally-dev/tally/storage"
)

// Trust in what a workspace ships — its MCP file, its skills, its hooks — is kept in
// the store, per kind, as the fingerprint of the content the user
// trusted for each workspace: a change of that content needs trust again.

// Store settings holding the trusted content of workspaces, by kind.
const (
	mcpTrustKey   = "mcp_trust"
	skillTrustKey = "skill_trust"
	hooksTrustKey = "hooks_trust"
)

type workspaceTrust struct {
	Workspaces map[string]string `json:"workspaces"`
}

// putTrust records hash as the trusted content of kind key in workspace;
// "" withdraws the trust. Only the latest trusted content is kept.
func putTrust(st *storage.Store, key, workspace, hash string) error {
	abs, err := checkWorkspace(workspace)
	if err != nil {
		return err
	}
	return st.Update(func(tx *storage.Tx) error {
		var t workspaceTrust
		if data, err := tx.Setting(key); err != nil {
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
		return tx.PutSetting(key, data)
	})
}

// trusted returns the trusted content of kind key in workspace, or "".
func trusted(st *storage.Store, key, what, workspace string) (string, error) {
	abs, err := checkWorkspace(workspace)
	if err != nil {
		return "", err
	}
	var t workspaceTrust
	data, err := st.Setting(key)
	if err != nil {
		return "", err
	}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &t); err != nil {
			return "", fmt.Errorf("the trusted %s in the store are unreadable (%w); trust the workspace's %s again", what, err, what)
		}
	}
	return t.Workspaces[abs], nil
}

// trustCheck reports, for a workspace file's trust hash, whether the user
// trusts that content under key ("what" names it in errors): the check
// mcp.LoadWorkspace and hooks.Load take.
func trustCheck(st *storage.Store, key, what, workspace string) func(hash string) bool {
	return func(hash string) bool {
		if st == nil {
			return false
		}
		h, err := trusted(st, key, what, workspace)
		return err == nil && h != "" && h == hash
	}
}

// TrustMCP records that the user trusts the MCP file of workspace whose
// content has the fingerprint hash: the workspace's servers then run in
// sessions opened from now on, until the file changes. An empty hash
// withdraws the trust. Only the latest trusted content of a workspace is
// kept.
func TrustMCP(st *storage.Store, workspace, hash string) error {
	return putTrust(st, mcpTrustKey, workspace, hash)
}

// MCPTrusted returns the fingerprint of the workspace MCP file content the
// user trusted, or "" when none.
func MCPTrusted(st *storage.Store, workspace string) (string, error) {
	return trusted(st, mcpTrustKey, "MCP files", workspace)
}

// TrustSkills records that the user trusts the skills of workspace whose
// content has the fingerprint hash (skill.Catalog.WorkspaceHash): they are
// offered in sessions created from now on, until one of them changes. An
// empty hash withdraws the trust.
func TrustSkills(st *storage.Store, workspace, hash string) error {
	return putTrust(st, skillTrustKey, workspace, hash)
}

// SkillsTrusted returns the fingerprint of the workspace skills the user
// trusted, or "" when none.
func SkillsTrusted(st *storage.Store, workspace string) (string, error) {
	return trusted(st, skillTrustKey, "skills", workspace)
}
