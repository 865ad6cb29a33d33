package agent

import (
	"encoding/json"
	"fmt"

	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/storage"
)

// hooksTrustKey is the store setting holding the trusted workspace hooks
// files: for each workspace, the hooks.TrustHash of the content the user
// trusted.
const hooksTrustKey = "hooks_trust"

type hooksTrust struct {
	Workspaces map[string]string `json:"workspaces"`
}

// TrustHooks records that the user trusts the hooks file of workspace
// whose content (with the scripts it names) has the fingerprint hash
// (hooks.TrustHash): its hooks then run in sessions opened from now on,
// until the file or a script changes. An empty hash withdraws the trust.
// Only the latest trusted content of a workspace is kept.
func TrustHooks(st *storage.Store, workspace, hash string) error {
	abs, err := checkWorkspace(workspace)
	if err != nil {
		return err
	}
	return st.Update(func(tx *storage.Tx) error {
		var t hooksTrust
		if data, err := tx.Setting(hooksTrustKey); err != nil {
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
		return tx.PutSetting(hooksTrustKey, data)
	})
}

// HooksTrusted returns the fingerprint of the workspace hooks file content
// the user trusted, or "" when none.
func HooksTrusted(st *storage.Store, workspace string) (string, error) {
	abs, err := checkWorkspace(workspace)
	if err != nil {
		return "", err
	}
	data, err := st.Setting(hooksTrustKey)
	if err != nil || len(data) == 0 {
		return "", err
	}
	var t hooksTrust
	if err := json.Unmarshal(data, &t); err != nil {
		return "", fmt.Errorf("the trusted hooks files in the store are unreadable (%v); trust the workspace's hooks file again", err)
	}
	return t.Workspaces[abs], nil
}

// hooksTrustCheck reports whether the user trusts the given trust hash of
// workspace's hooks file.
func hooksTrustCheck(st *storage.Store, workspace string) func(hash string) bool {
	return func(hash string) bool {
		if st == nil {
			return false
		}
		h, err := HooksTrusted(st, workspace)
		return err == nil && h != "" && h == hash
	}
}

// UntrustedHooksNote is the one-line note for a workspace hooks file that
// is not trusted: what was skipped and how to trust it.
func UntrustedHooksNote(workspace string) string {
	return fmt.Sprintf("the hooks of %s do not run because the file is not trusted yet; review it, then trust it in Settings or with `tally hooks trust --workspace %s`",
		hooks.WorkspacePath(workspace), workspace)
}
