package workbench

import (
	"fmt"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/internal/trust"
)

// The front door of the hooks settings: the user's hooks (hooks.UserPath)
// and a workspace's (its .tally/hooks.json, run only once the user trusted
// its exact content and the scripts it names). Sessions read the same
// files when they are created or opened (see agent.HooksOptions).

// HookEntry is one configured hook for the settings page and `tally hooks
// list`.
type HookEntry struct {
	hooks.Hook
	// Trusted is false for a workspace hook whose file is not trusted:
	// it does not run.
	Trusted bool `json:"trusted"`
	// Last is the hook's last run in the session given to Hooks, nil
	// when it has not run there.
	Last *hooks.Run `json:"last,omitempty"`
}

// HooksListing is every hook sessions of a workspace would see.
type HooksListing struct {
	// UserPath is the user's hooks file.
	UserPath string `json:"user_path"`
	// Hooks are the user's hooks, then the workspace's, in file order.
	Hooks []HookEntry `json:"hooks"`
	// Workspace is the workspace's hooks file (Path "" when none).
	Workspace hooks.WorkspaceFile `json:"workspace"`
	// Notes are the files' problems, one sentence each.
	Notes []string `json:"notes,omitempty"`
}

// Hooks lists the user's hooks and those of workspace ws ("" for none),
// with their last runs in the live session sess (nil for none).
func (w *Workbench) Hooks(ws string, sess *agent.Session) (HooksListing, error) {
	var out HooksListing
	path, err := hooks.UserPath()
	if err != nil {
		return out, err
	}
	out.UserPath = path
	user, notes, err := hooks.LoadFile(path, hooks.SourceUser)
	if err != nil {
		return out, err
	}
	out.Notes = notes
	last := map[string]hooks.Run{}
	if sess != nil {
		for _, h := range sess.Hooks().Status().Hooks {
			if h.Last != nil {
				last[h.ID] = *h.Last
			}
		}
	}
	add := func(h hooks.Hook, trusted bool) {
		e := HookEntry{Hook: h, Trusted: trusted}
		if r, ok := last[h.ID]; ok && trusted {
			e.Last = &r
		}
		out.Hooks = append(out.Hooks, e)
	}
	for _, h := range user {
		add(h, true)
	}
	if ws == "" {
		return out, nil
	}
	_, wf, notes, err := hooks.LoadWorkspace(ws, w.hooksTrusted(ws))
	out.Workspace, out.Notes = wf, append(out.Notes, notes...)
	if err != nil {
		return out, err
	}
	for _, h := range wf.Preview {
		add(h, !wf.NeedsTrust)
	}
	return out, nil
}

// HooksWorkspaceFile describes the hooks file of workspace ws for the trust
// prompt: its path and hash ("" when there is none), whether it needs the
// user's trust, and the hooks it holds (Preview).
func (w *Workbench) HooksWorkspaceFile(ws string) (hooks.WorkspaceFile, error) {
	_, wf, _, err := hooks.LoadWorkspace(ws, w.hooksTrusted(ws))
	return wf, err
}

func (w *Workbench) hooksTrusted(ws string) func(string) bool {
	return func(hash string) bool {
		h, err := trust.Get(w.store, trust.Hooks, ws)
		return err == nil && h != "" && h == hash
	}
}

// TrustHooks trusts the hooks file of workspace ws with content hash (the
// Hash HooksWorkspaceFile returned, which the user reviewed): its hooks
// run in sessions opened from now on, until the file or a script it
// names changes.
func (w *Workbench) TrustHooks(ws, hash string) error {
	wf, err := w.HooksWorkspaceFile(ws)
	if err != nil {
		return err
	}
	switch {
	case wf.Path == "":
		return fmt.Errorf("%s has no hooks file (%s) to trust", ws, hooks.WorkspacePath(ws))
	case hash == "" || wf.Hash != hash:
		return fmt.Errorf("%s or a script it names changed since it was reviewed; review it again before trusting it", wf.Path)
	}
	return trust.Put(w.store, trust.Hooks, ws, hash)
}

// UntrustHooks withdraws the trust in workspace ws's hooks file.
func (w *Workbench) UntrustHooks(ws string) error { return trust.Put(w.store, trust.Hooks, ws, "") }
