package widget

import (
	"strings"
	"testing"
)

func TestClipForDisplay(t *testing.T) {
	long := make([]byte, 10000)
	for i := range long {
		long[i] = 'x'
	}
	got := ClipForDisplay(string(long))
	if len(got) > MaxShown+40 || !strings.Contains(got, "… 6,000 more chars") {
		t.Errorf("long text clipped to %d chars ending %q", len(got), got[len(got)-30:])
	}
	if got := ClipForDisplay("a\x00b"); !strings.Contains(got, "binary output") {
		t.Errorf("binary shown as %q", got)
	}
}
