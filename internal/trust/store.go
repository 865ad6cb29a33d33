package trust

import (
	"encoding/json"
	"fmt"

	"github.com/tally-dev/tally/internal/workspace"
	"github.com/tally-dev/tally/storage"
)

// Kind is one kind of workspace content the user trusts: its MCP file, its
// skills or its hooks. Each is kept in the store as the fingerprint of the
// content the user trusted for each workspace, so a change of that content
// needs trust again; only the latest trusted content is kept.
type Kind struct {
	key  string // the store setting
	what string // its name in errors, plural
}

// The kinds of trusted workspace content.
var (
	MCP    = Kind{"mcp_trust", "MCP files"}
	Skills = Kind{"skill_trust", "skills"}
	Hooks  = Kind{"hooks_trust", "hooks files"}
)

type record struct {
	Workspaces map[string]string `json:"workspaces"`
}

// Put records hash as the trusted content of kind k in workspace ws; ""
// withdraws the trust.
func Put(st *storage.Store, k Kind, ws, hash string) error {
	abs, err := workspace.Resolve(ws)
	if err != nil {
		return err
	}
	return st.Update(func(tx *storage.Tx) error {
		var t record
		if data, err := tx.Setting(k.key); err != nil {
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
		return tx.PutSetting(k.key, data)
	})
}

// Get returns the fingerprint of kind k's content the user trusted in
// workspace ws, or "" when none.
func Get(st *storage.Store, k Kind, ws string) (string, error) {
	abs, err := workspace.Resolve(ws)
	if err != nil {
		return "", err
	}
	data, err := st.Setting(k.key)
	if err != nil {
		return "", err
	}
	var t record
	if len(data) > 0 {
		if err := json.Unmarshal(data, &t); err != nil {
			return "", fmt.Errorf("the trusted %s in the store are unreadable (%w); trust the workspace's %s again", k.what, err, k.what)
		}
	}
	return t.Workspaces[abs], nil
}

// Check returns the check a loader of kind k's workspace file takes: it
// reports whether the user trusts the content with fingerprint hash in
// workspace ws. Without a store nothing is trusted.
func Check(st *storage.Store, k Kind, ws string) func(hash string) bool {
	return func(hash string) bool {
		if st == nil {
			return false
		}
		h, err := Get(st, k, ws)
		return err == nil && h != "" && h == hash
	}
}
