//go:build unix

package tool

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSpecialFilesDoNotBlock checks that tools refuse or skip named pipes
// instead of blocking on them.
func TestSpecialFilesDoNotBlock(t *testing.T) {
	ws, env := newWorkspace(t, map[string]string{"a.txt": "needle\n"})
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Skip(err)
	}
	cases := []struct {
		tool    Tool
		args    map[string]any
		wantErr bool
	}{
		{ReadFile(), map[string]any{"path": "pipe"}, true},
		{EditFile(), map[string]any{"path": "pipe", "old_string": "a", "new_string": "b"}, true},
		{WriteFile(), map[string]any{"path": "pipe", "content": "x"}, true},
		{Grep(), map[string]any{"pattern": "needle"}, false},
		{ListDir(), map[string]any{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.tool.Spec().Name, func(t *testing.T) {
			done := make(chan Result, 1)
			go func() { done <- call(t, tc.tool, env, tc.args) }()
			select {
			case res := <-done:
				if res.IsError != tc.wantErr {
					t.Errorf("IsError = %v, want %v: %s", res.IsError, tc.wantErr, res.Content)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the tool blocked on a named pipe")
			}
		})
	}
}
