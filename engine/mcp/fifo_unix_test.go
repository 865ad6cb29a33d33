//go:build unix

package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A repository that ships a FIFO as .tally/mcp.json made every session
// start block forever on opening it.
func TestFIFOAtMCPJSONDoesNotHang(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".tally"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(WorkspacePath(ws), 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	type out struct {
		wf  WorkspaceFile
		err error
	}
	done := make(chan out, 1)
	go func() {
		_, wf, err := LoadWorkspace(ws, func(string) bool { return true })
		done <- out{wf, err}
	}()
	select {
	case o := <-done:
		if o.err == nil || !strings.Contains(o.err.Error(), "not a regular file") || o.wf.Path != "" {
			t.Errorf("LoadWorkspace of a FIFO = %+v, %v; want a not-a-regular-file error", o.wf, o.err)
		}
	case <-time.After(5 * time.Second):
		// Unblock the stuck open before failing.
		if f, err := os.OpenFile(WorkspacePath(ws), os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("LoadWorkspace blocked on a FIFO at .tally/mcp.json")
	}
	// The user's file goes through the same guard.
	path := filepath.Join(t.TempDir(), FileName)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("LoadFile of a FIFO = %v; want a not-a-regular-file error", err)
	}
}

// A symlinked .tally/mcp.json pointing outside the workspace is not
// followed.
func TestSymlinkedMCPJSONLeavingTheWorkspaceIsRefused(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "repo")
	outside := filepath.Join(root, "mcp.json")
	if err := os.WriteFile(outside, []byte(`{"mcpServers": {"x": {"command": "sh"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".tally"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, WorkspacePath(ws)); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := LoadWorkspace(ws, func(string) bool { return true })
	if err == nil || len(cfg.Servers) != 0 {
		t.Errorf("a symlinked mcp.json was read: %+v, %v", cfg, err)
	}
}
