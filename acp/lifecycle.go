package acp

import (
	"context"
	"errors"
	"path/filepath"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/workbench"
)

// Logout implements acp.Agent. Tally offers no authentication methods,
// so there is nothing to end.
func (s *Server) Logout(context.Context, acp.LogoutRequest) (acp.LogoutResponse, error) {
	return acp.LogoutResponse{}, nil
}

// configure adds the server's own settings to a session's configuration:
// the client's MCP servers and --fetch-local.
func (s *Server) configure(cfg *agent.Config, servers []acp.McpServer) {
	if s.o.FetchLocal {
		cfg.Shell.FetchLocal = true
	}
	s.addMCP(cfg, servers)
}

// extraDirs checks the additional directories of a session/new, load,
// resume or fork and returns them as the session's folders: the protocol
// wants absolute paths, and an omitted or empty list means none (a
// non-nil empty list, which clears the stored ones). The engine checks
// the rest (see workspace.Roots).
func extraDirs(dirs []string) ([]string, error) {
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, invalid("the additional directory %q is not an absolute path; send it in full", d)
		}
	}
	return append([]string{}, dirs...), nil
}

// UnstableDeleteSession implements session/delete (stable in the
// protocol, still named unstable by the Go SDK): it closes the session
// when this connection has it open, then deletes it with all its data,
// as tally sessions rm does. Deleting an unknown session is an error.
func (s *Server) UnstableDeleteSession(_ context.Context, p acp.UnstableDeleteSessionRequest) (_ acp.UnstableDeleteSessionResponse, err error) {
	defer s.guard("DeleteSession", &err)
	id := string(p.SessionId)
	if err := agent.ValidID(id); err != nil {
		return acp.UnstableDeleteSessionResponse{}, notFound(id)
	}
	wb, err := s.workbench()
	if err != nil {
		return acp.UnstableDeleteSessionResponse{}, failure(err)
	}
	if _, err := wb.Session(id); errors.Is(err, workbench.ErrNotFound) {
		return acp.UnstableDeleteSessionResponse{}, notFound(id)
	} else if err != nil {
		return acp.UnstableDeleteSessionResponse{}, failure(err)
	}
	s.mu.Lock()
	st := s.sessions[id]
	delete(s.sessions, id)
	s.mu.Unlock()
	if st != nil {
		st.close()
	} else if err := s.claim(wb, id); err != nil {
		return acp.UnstableDeleteSessionResponse{}, err
	}
	if err := wb.Delete(id); err != nil {
		return acp.UnstableDeleteSessionResponse{}, failure(err)
	}
	return acp.UnstableDeleteSessionResponse{}, nil
}

// claim opens session id for a moment, without its MCP servers, to learn
// that no other holder (the app's window) has it open.
func (s *Server) claim(wb *workbench.Workbench, id string) error {
	cfg, err := wb.Config(workbench.SessionOptions{ID: id, Approver: tool.DenyAll{}})
	if err != nil && !errors.Is(err, workbench.ErrNoModel) {
		return failure(err)
	}
	cfg.MCP.Off = true
	sess, err := wb.OpenSession(cfg, id)
	if err != nil {
		return failuref("session %s cannot be deleted now: %s", id, sentence(err.Error()))
	}
	sess.Close()
	return nil
}
