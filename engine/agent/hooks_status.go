package agent

import (
	"slices"

	"github.com/tally-dev/tally/engine/hooks"
)

// Hooks is the session's command hooks: which run, each one's last run,
// and the latest runs.
type Hooks struct{ s *Session }

// Hooks returns the session's hooks handle.
func (s *Session) Hooks() Hooks { return Hooks{s} }

// HookInfo is one hook of a session with its last run (nil before it
// first ran).
type HookInfo struct {
	hooks.Hook
	Last *hooks.Run `json:"last,omitempty"`
}

// HooksStatus is the state of a session's hooks, for the settings and the
// trust banner.
type HooksStatus struct {
	// Hooks is every hook that runs: the user's first, then the
	// workspace's trusted ones, in their files' order.
	Hooks []HookInfo `json:"hooks"`
	// Notes are the configuration's problems, one sentence each.
	Notes []string `json:"notes,omitempty"`
	// Workspace is the workspace's hooks file (Path "" when it has none);
	// Workspace.NeedsTrust asks the app for the trust prompt, and
	// Workspace.Preview lists what trusting it would run.
	Workspace hooks.WorkspaceFile `json:"workspace"`
}

// Status returns the session's hooks and their last runs. It never waits
// for a running turn; every value is a copy.
func (h Hooks) Status() HooksStatus {
	hs := h.s.hooks
	if hs == nil {
		return HooksStatus{}
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	st := HooksStatus{Notes: slices.Clone(hs.notes), Workspace: hs.wf}
	st.Workspace.Preview = slices.Clone(hs.wf.Preview)
	for _, hk := range hs.hooks {
		info := HookInfo{Hook: hk}
		if r, ok := hs.last[hk.ID]; ok {
			info.Last = &r
		}
		st.Hooks = append(st.Hooks, info)
	}
	return st
}

// Runs returns the session's latest hook runs, oldest first (at most the
// last 100). It never waits for a running turn.
func (h Hooks) Runs() []hooks.Run {
	hs := h.s.hooks
	if hs == nil {
		return nil
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return slices.Clone(hs.runs)
}
