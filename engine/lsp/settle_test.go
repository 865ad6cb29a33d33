package lsp

import (
	"testing"
	"time"
)

// A server that does not say the version and took long to publish (a busy
// typescript-language-server sends a file's syntax diagnostics first and
// its type errors later) settles only after a quiet spell as long as its
// publish took, up to maxQuiet; a quick one after quiet.
func TestUnversionedDiagnosticsWaitAsLongAsThePublishTook(t *testing.T) {
	sent := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want := map[string]document{"calc.ts": {version: 2}}
	for _, c := range []struct {
		name             string
		publishedAfter   time.Duration
		settledAfterLast time.Duration
	}{
		{"a quick publish", 50 * time.Millisecond, quiet},
		{"a publish after 1.5 s", 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"a publish after 10 s", 10 * time.Second, maxQuiet},
	} {
		at := sent.Add(c.publishedAfter)
		conn := &conn{open: map[string]sentDoc{"calc.ts": {version: 2, at: sent}},
			diags: map[string]*published{"calc.ts": {at: at}}, lastPublish: at}
		if ok, _ := settledLocked(conn, []string{"calc.ts"}, want, at.Add(c.settledAfterLast-time.Millisecond)); ok {
			t.Errorf("%s: settled %s after it", c.name, c.settledAfterLast-time.Millisecond)
		}
		if ok, _ := settledLocked(conn, []string{"calc.ts"}, want, at.Add(c.settledAfterLast)); !ok {
			t.Errorf("%s: not settled %s after it", c.name, c.settledAfterLast)
		}
	}
}
