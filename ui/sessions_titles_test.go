package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/workbench"
)

// Two sessions started with the same prompt are told apart in the list,
// and a running session is "active now", not "4 min ago".
func TestSessionRowsTellSameTitlesApartAndShowActivity(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.Local)
	items := []workbench.SessionInfo{
		{ID: "a", Title: "Fix the failing tests in the calc package", Created: at},
		{ID: "b", Title: "Fix the failing tests in the calc package", Created: at.Add(90 * time.Second)},
		{ID: "c", Title: "Something else", Created: at},
	}
	a, b, c := listTitle(items, 0), listTitle(items, 1), listTitle(items, 2)
	if a == b || !strings.HasPrefix(a, "Mar 1 09:00:00 · ") || !strings.HasPrefix(b, "Mar 1 09:01:30 · ") {
		t.Errorf("same titles shown as %q and %q", a, b)
	}
	if c != "Something else" {
		t.Errorf("a unique title shown as %q", c)
	}
	s := workbench.SessionInfo{Workspace: "/w", Updated: at, Cycle: 1}
	now := at.Add(4 * time.Minute)
	if got := sessionDetail(s, now, false, nil); !strings.Contains(got, "4 min ago") {
		t.Errorf("an idle session's detail %q", got)
	}
	if got := sessionDetail(s, now, true, nil); !strings.Contains(got, "active now") || strings.Contains(got, "ago") {
		t.Errorf("a running session's detail %q", got)
	}
}

// A fork's row says where it comes from before its folder, which a narrow
// list cuts off.
func TestSessionDetailPutsTheLineageFirst(t *testing.T) {
	now := time.Now()
	parent := workbench.SessionInfo{ID: "p1", Title: "Fix Add", Workspace: "/a/long/folder", Updated: now}
	fork := workbench.SessionInfo{ID: "f1", Title: "Fix Add (fork)", Workspace: "/a/long/folder", Updated: now, ForkOf: "p1", ForkTurn: 2}
	got := sessionDetail(fork, now, false, []workbench.SessionInfo{parent, fork})
	if !strings.HasPrefix(got, "forked from Fix Add at turn 2 · /a/long/folder") {
		t.Errorf("the fork's row says %q", got)
	}
	if got := sessionDetail(parent, now, false, nil); !strings.HasPrefix(got, "/a/long/folder · ") || strings.Contains(got, "forked") {
		t.Errorf("the parent's row says %q", got)
	}
}
