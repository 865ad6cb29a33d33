package agent

import (
	"fmt"

	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/storage"
)

// TrustHooks records that the user trusts the hooks file of workspace
// whose content (with the scripts it names) has the fingerprint hash
// (hooks.TrustHash): its hooks then run in sessions opened from now on,
// until the file or a script changes. An empty hash withdraws the trust.
// Only the latest trusted content of a workspace is kept.
func TrustHooks(st *storage.Store, workspace, hash string) error {
	return putTrust(st, hooksTrustKey, workspace, hash)
}

// HooksTrusted returns the fingerprint of the workspace hooks file content
// the user trusted, or "" when none.
func HooksTrusted(st *storage.Store, workspace string) (string, error) {
	return trusted(st, hooksTrustKey, "hooks files", workspace)
}

// UntrustedHooksNote is the one-line note for a workspace hooks file that
// is not trusted: what was skipped and how to trust it.
func UntrustedHooksNote(workspace string) string {
	return fmt.Sprintf("the hooks of %s do not run because the file is not trusted yet; review it, then trust it in Settings or with `tally hooks trust --workspace %s`",
		hooks.WorkspacePath(workspace), workspace)
}
