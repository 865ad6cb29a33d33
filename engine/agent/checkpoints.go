package agent

import (
	"os"
)

// Close ends the session's recording of file changes: a closed session's
// checkpoints are the first dropped when the store passes its size limit.
// The session stays readable; a later Open records again. Its MCP servers
// are stopped, and its share of the workspace's language servers given back.
// Config.OnClose runs last.
func (s *Session) Close() error {
	s.mcpRun.Close()
	s.lsp.Close()
	s.hooks.Close()
	s.mu.Lock()
	if s.env.TempDir != "" {
		// Commands died with their calls; nothing uses it any more.
		os.RemoveAll(s.env.TempDir)
	}
	err := s.turns.Close()
	s.mu.Unlock()
	if s.cfg.OnClose != nil {
		s.cfg.OnClose()
	}
	return err
}
