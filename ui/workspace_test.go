package ui

import (
	"strings"
	"testing"
)

// The New-session dialog took the home folder (its default when the app
// starts in ~) as a workspace. It now refuses it by the engine's rule
// (agent.CheckWorkspace), with a sentence saying what to do.
func TestNewSessionInHomeIsRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	h := newHarness(t, map[string]string{})
	h.ui.createSession(home, "keys")
	h.waitFor("the refusal", func() bool { return strings.Contains(h.ui.banner.Text(), "pass a project folder") })
	h.q.drain()
	if h.ui.live != nil {
		t.Fatal("a session was opened in the home folder")
	}
	list, err := h.ui.wb.Sessions()
	if err != nil || len(list) != 0 {
		t.Fatalf("sessions %v, %v; want none", list, err)
	}
}
