package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/cycle"
)

func TestArchiveButtonOpensBrowser(t *testing.T) {
	h := fakeSession(t, &fakeOps{archives: []cycle.Archive{{Cycle: 1, Brief: "the brief", Started: time.Now()}}})
	test.Tap(h.ui.actions.archive)
	h.waitFor("the archive", func() bool { return h.overlayShows("the brief") })
	if !h.shows("Cycle 1 ·") {
		t.Error("the archive dialog does not show the cycle and its brief")
	}
}
