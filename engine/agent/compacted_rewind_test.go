package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRewindAcrossTheCompactedPart (issue 19, item 5): after compactions
// have taken the user's first message out of the log (it became a stub
// line), Turns still lists it, History still holds it in a rebuild's
// superseded messages, and a rewind of the files to it works; a rewind of
// the conversation to it is refused with the reason, and one to a turn
// still in the log works.
func TestRewindAcrossTheCompactedPart(t *testing.T) {
	f := &fidelity{t: t, texts: map[string]string{}, retrieved: map[string]string{}, want: map[string]string{}, known: map[string]string{}}
	sw := newSmallWindow(t, fidelityWindow, f.script(fidelityTurns()))
	f.rec = sw.rec
	os.MkdirAll(filepath.Join(sw.ws, "calc"), 0o755)
	os.WriteFile(filepath.Join(sw.ws, "Makefile"), []byte("check:\n\ttest -f calc/table_test.go\n"), 0o644)
	s := sw.session("rewind-compacted")
	f.budget = func(int) int { return 0 }
	ctx := context.Background()
	for n := 1; n < fidelityCycleTurn; n++ {
		f.mu.Lock()
		f.turn, f.step = n, 0
		f.mu.Unlock()
		if _, err := s.Run(ctx, userText(n)); err != nil {
			t.Fatalf("turn %d: %v", n, err)
		}
	}
	sw.checkRequests(t)
	turns := s.Snapshot().Turns()
	if len(turns) != fidelityCycleTurn-1 || turns[0].Text != fidelityTask {
		t.Fatalf("turns = %+v", turns)
	}
	if turns[0].LogIndex >= 0 {
		t.Fatal("no compaction took the first message out of the log; the test does not exercise the compacted part")
	}
	// The message is in the superseded messages of a rebuild.
	past, err := s.Compaction().History()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range past {
		for _, m := range p.Superseded {
			found = found || (m.IsPlainUserText() && m.Body() == fidelityTask)
		}
	}
	if !found {
		t.Error("History does not hold the compacted first message")
	}
	plan, err := s.Rewind().Plan(1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.ChatErr, "compaction") || plan.FilesErr != "" || len(plan.Files.Files) == 0 {
		t.Fatalf("plan: chat %q, files %q, %d files", plan.ChatErr, plan.FilesErr, len(plan.Files.Files))
	}
	if _, err := s.Rewind().Apply(ctx, 1, false, true, false); err == nil || !strings.Contains(err.Error(), "compaction") {
		t.Errorf("a chat rewind to a compacted turn: %v", err)
	}
	if _, err := s.Rewind().Apply(ctx, 1, true, false, false); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"calc/convert.go", "calc/table_test.go"} {
		if _, err := os.Stat(filepath.Join(sw.ws, p)); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the files were rewound to turn 1 (%v)", p, err)
		}
	}
	// A turn still in the log is rewound in the conversation as before.
	last := s.Snapshot().Turns()[len(turns)-1]
	if last.LogIndex < 0 {
		t.Fatalf("the last turn is not in the log: %+v", last)
	}
	res, err := s.Rewind().Apply(ctx, last.N, false, true, false)
	if err != nil || res.Text != userText(last.N) {
		t.Fatalf("rewind to turn %d: %q, %v", last.N, res.Text, err)
	}
	if _, err := s.Run(ctx, "Carry on."); err != nil {
		t.Fatal(err)
	}
	sw.checkRequests(t)
	if n := len(sw.srv.Invalid()); n > 0 {
		t.Errorf("%d requests were rejected after the rewind", n)
	}
}
