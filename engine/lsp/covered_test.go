package lsp

import "testing"

// The workspace's servers cover its files, by relative or absolute path,
// and none of a session's additional folders.
func TestServersCoverTheWorkspaceOnly(t *testing.T) {
	l := &Session{mgr: &Manager{ws: "/work/app", real: "/work/app"}, servers: []ServerConfig{{Name: "gopls", Extensions: []string{".go"}}}}
	for p, want := range map[string]bool{
		"main.go":           true,
		"/work/app/main.go": true,
		"/work/lib/x.go":    false,
		"/work/app/README":  false,
		"notes.md":          false,
	} {
		if got := l.covered(p); got != want {
			t.Errorf("covered(%q) = %v; want %v", p, got, want)
		}
	}
}
