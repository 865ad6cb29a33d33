package acp

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/workbench"
)

// UnstableForkSession implements session/fork (unstable in the protocol
// and in the Go SDK v0.13.5): a new session whose history is the given
// one's up to the end of its last turn, byte for byte, so the model's
// cache still serves it (see workbench.ForkSession); the given session is
// not changed. The fork works in the same folder, cwd, with no file
// touched. Tally's own _meta keys pick another turn and a git worktree:
// {"tally": {"turn": N, "worktree": true}} (then cwd names the parent's
// folder and the fork works in its new worktree, holding the files as they
// were at that turn). The new session is open on the connection, like one
// session/new made.
func (s *Server) UnstableForkSession(_ context.Context, p acp.UnstableForkSessionRequest) (_ acp.UnstableForkSessionResponse, err error) {
	defer s.guard("ForkSession", &err)
	dirs, err := extraDirs(p.AdditionalDirectories)
	if err != nil {
		return acp.UnstableForkSessionResponse{}, err
	}
	parent := string(p.SessionId)
	if err := agent.ValidID(parent); err != nil {
		return acp.UnstableForkSessionResponse{}, notFound(parent)
	}
	wb, err := s.workbench()
	if err != nil {
		return acp.UnstableForkSessionResponse{}, failure(err)
	}
	info, err := wb.Session(parent)
	if errors.Is(err, workbench.ErrNotFound) {
		return acp.UnstableForkSessionResponse{}, notFound(parent)
	} else if err != nil {
		return acp.UnstableForkSessionResponse{}, failure(err)
	}
	if filepath.Clean(p.Cwd) != filepath.Clean(info.Workspace) {
		return acp.UnstableForkSessionResponse{}, invalid("session %s works in %s, and a fork starts in the same folder; pass that folder as cwd (with _meta tally.worktree for a git worktree of its own)", parent, info.Workspace)
	}
	if _, err := agent.CheckRoots(info.Workspace, dirs, filepath.Dir(wb.Path())); err != nil {
		return acp.UnstableForkSessionResponse{}, invalid("%s", sentence(err.Error())) // before a fork is made
	}
	o, err := forkMeta(p.Meta)
	if err != nil {
		return acp.UnstableForkSessionResponse{}, err
	}
	f, err := wb.ForkSession(context.Background(), parent, o)
	if f.Session.ID == "" {
		return acp.UnstableForkSessionResponse{}, failuref("session %s cannot be forked: %s", parent, sentence(err.Error()))
	}
	st, oerr := s.open(f.Session.ID, retype[[]acp.McpServer](p.McpServers), dirs)
	if oerr != nil {
		return acp.UnstableForkSessionResponse{}, oerr
	}
	st.commandsLater()
	resp := acp.UnstableForkSessionResponse{SessionId: acp.SessionId(f.Session.ID), Modes: st.modes(), ConfigOptions: retype[[]acp.UnstableSessionConfigOption](st.configOptions())}
	resp.Meta = map[string]any{"tally": map[string]any{"forkOf": parent, "turn": f.Turn, "messages": f.Messages, "workspace": f.Session.Workspace}}
	if err != nil {
		resp.Meta["tally"].(map[string]any)["warning"] = err.Error()
	}
	return resp, nil
}

// forkMeta reads Tally's keys of a session/fork's _meta: the turn (0 or
// absent: the last) and whether the fork gets a worktree.
func forkMeta(meta map[string]any) (workbench.ForkOptions, error) {
	var o workbench.ForkOptions
	t, _ := meta["tally"].(map[string]any)
	if v, ok := t["turn"]; ok {
		n, isNum := v.(float64)
		if !isNum || n < 0 || n != float64(int(n)) {
			return o, invalid("_meta.tally.turn must be a turn number from 1 on (or 0 for the last), not %v", v)
		}
		o.Turn = int(n)
	}
	if v, ok := t["worktree"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return o, invalid("_meta.tally.worktree must be true or false, not %v", v)
		}
		o.Worktree = b
	}
	return o, nil
}

// retype gives v in another of the SDK's types with the same JSON (the
// unstable session/fork carries config options and MCP servers in types
// of its own); the zero value when it does not fit.
func retype[T any](v any) T {
	var out T
	if data, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(data, &out)
	}
	return out
}
