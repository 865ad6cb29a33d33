//go:build unix

package workbench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/internal/sandbox"
)

// `tally mcp list --probe` and the settings' Test button started a
// workspace's server as the user, so the repository's script ran outside
// any sandbox without being trusted.
func TestProbeRunsWorkspaceServerUnsandboxed(t *testing.T) {
	if ok, why := sandbox.Available(); !ok {
		t.Skip("no sandbox here: " + why)
	}
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "pwned")
	os.WriteFile(filepath.Join(ws, "server.sh"), []byte("#!/bin/sh\necho ran > '"+marker+"'\nexit 1\n"), 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := ProbeMCP(ctx, "repo", mcp.ServerConfig{Command: "sh", Args: []string{"server.sh"}, Workspace: true}, ws)
	if err == nil {
		t.Error("the probe of a server that exits at once succeeded")
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("the workspace's server wrote outside the workspace while probed: %q", b)
	}
}
