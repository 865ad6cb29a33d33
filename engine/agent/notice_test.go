package agent

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/rewrite"
)

// noticeScript answers every question with a long text, so only a
// summary can shrink the history, and the summary remembers little.
func noticeScript() llmtest.Script {
	answer := strings.Repeat("The fixture files hold numbered lines; each line names its file, its number and a count. ", 60)
	return llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			return llmtest.Text("The user asked questions about the fixture files; they were answered.")
		}
		if req.Index == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "checklist_write", Arguments: `{"items":[{"content":"Describe every fixture file","status":"in_progress"}]}`}}}
		}
		return llmtest.Text(answer)
	})
}

// noticeRun runs turns on a 128K window until the session has compacted
// twice (or 160 turns), calling onNotice for each notice. It returns the
// harness and the session.
func noticeRun(t *testing.T, onNotice func(*Session, Event)) (*smallWindow, *Session) {
	t.Helper()
	sw := newSmallWindow(t, 128_000, noticeScript())
	var s *Session
	inner := sw.cfg.OnEvent
	sw.cfg.OnEvent = func(e Event) {
		inner(e)
		if e.Kind == EventCompactionSoon && onNotice != nil {
			onNotice(s, e)
		}
	}
	s = sw.session("notice")
	for i := 0; i < 160 && countCompactions(sw.rec) < 2; i++ {
		if _, err := s.Run(context.Background(), "Tell me about the fixture files."); err != nil {
			t.Fatal(err)
		}
	}
	sw.checkRequests(t)
	return sw, s
}

func countCompactions(rec *recorder) int {
	n := 0
	for _, e := range rec.kinds(EventRebuild) {
		if e.Rebuild.Kind == rewrite.Compaction {
			n++
		}
	}
	return n
}

// ordered returns the notices and compactions in the order they came.
func ordered(rec *recorder) []Event {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []Event
	for _, e := range rec.events {
		if e.Kind == EventCompactionSoon || (e.Kind == EventRebuild && e.Rebuild.Kind == rewrite.Compaction) {
			out = append(out, e)
		}
	}
	return out
}

// TestCompactionNoticeOncePerCrossing: the level crosses the notice mark
// twice on the way to two automatic compactions, and each crossing sends
// exactly one notice, under the threshold, carrying the dry run's counts;
// the compaction rows carry the counts and the record.
func TestCompactionNoticeOncePerCrossing(t *testing.T) {
	if testing.Short() {
		t.Skip("sessions that fill a 128K window")
	}
	sw, _ := noticeRun(t, nil)
	evs := ordered(sw.rec)
	var got []string
	for _, e := range evs {
		got = append(got, string(e.Kind))
	}
	want := []string{"compaction_soon", "rebuild", "compaction_soon", "rebuild"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("notices and compactions came as %v; want %v", got, want)
	}
	for _, e := range evs {
		if n := e.Notice; n != nil {
			f := n.Plan.Fidelity
			if n.Level < n.Mark || n.Level >= n.Threshold || n.Mark != int(float64(n.Threshold)*rewrite.NoticeFraction) {
				t.Errorf("notice at %d with mark %d and threshold %d", n.Level, n.Mark, n.Threshold)
			}
			if f.Verbatim == 0 || f.Summarised == 0 || f.Recallable == 0 || n.Plan.Auto == nil {
				t.Errorf("the notice's plan lacks the counts: %+v", f)
			}
			if p := n.Percent(); p < 90 || p > 99 {
				t.Errorf("notice percent %d", p)
			}
			continue
		}
		r := e.Rebuild
		if r.Fidelity == nil || r.Fidelity.Verbatim == 0 || r.Fidelity.Summarised == 0 {
			t.Errorf("the compaction's row has no counts: %+v", r.Fidelity)
		}
		if !strings.Contains(r.Record, "Describe every fixture file") {
			t.Errorf("the compaction's row has no record: %q", r.Record)
		}
	}
}

// TestNotNowSkipsOneCompaction: "Not now" on the first notice holds back
// the compaction that would have run at the threshold until the level is
// a rewrite.PostponeStep further; the next crossing's compaction runs as usual;
// and no request differs from those of the same session without the
// answer until the compaction it held back, so the prefix cache is the
// same with or without the notice and its answer.
func TestNotNowSkipsOneCompaction(t *testing.T) {
	if testing.Short() {
		t.Skip("sessions that fill a 128K window")
	}
	plain, _ := noticeRun(t, nil)
	answered := 0
	later, _ := noticeRun(t, func(s *Session, e Event) {
		if answered == 0 {
			done := make(chan struct{})
			go func() { s.Compaction().Postpone(); close(done) }() // as the UI does, off the turn
			<-done
		}
		answered++
	})
	p, l := ordered(plain.rec), ordered(later.rec)
	if len(p) != 4 || len(l) != 4 || l[0].Notice == nil || l[1].Rebuild == nil || l[2].Notice == nil || l[3].Rebuild == nil {
		t.Fatalf("with Not now: %d events (%+v)", len(l), l)
	}
	threshold := l[0].Notice.Threshold
	skipped, heldBack := p[1].Rebuild, l[1].Rebuild
	until := max(threshold, l[0].Notice.Level) + int(float64(threshold)*rewrite.PostponeStep)
	// The engine weighs the level with the status block's reserve, as the
	// notice names it; a rebuild's TokensBefore is the level without it.
	if heldBack.TokensBefore+rewrite.StatusReserve < until || heldBack.TokensBefore <= skipped.TokensBefore {
		t.Errorf("the postponed compaction ran at %d; without Not now at %d, and it is due at %d", heldBack.TokensBefore, skipped.TokensBefore, until)
	}
	// The next compaction is not postponed: it runs near the threshold,
	// as the first one does without Not now.
	if next := l[3].Rebuild; next.TokensBefore >= until {
		t.Errorf("the compaction after the postponed one ran at %d, past the step at %d", next.TokensBefore, until)
	}
	pr, lr := plain.srv.Requests(), later.srv.Requests()
	first := -1
	for i, r := range pr {
		if isSummaryRequest(&llmtest.Req{Messages: r.Messages}) {
			first = i
			break
		}
	}
	if first < 0 || len(lr) <= first {
		t.Fatalf("no summary request without Not now, or too few with it (%d, %d)", first, len(lr))
	}
	for i := 0; i < first; i++ {
		// The two workspaces are different folders; nothing else may differ.
		a := bytes.ReplaceAll(pr[i].Body, []byte(plain.ws), []byte("WS"))
		b := bytes.ReplaceAll(lr[i].Body, []byte(later.ws), []byte("WS"))
		if !bytes.Equal(a, b) {
			t.Fatalf("request %d's bytes differ with Not now", i)
		}
	}
	// Past the point where the plain session compacted, the postponed one
	// only appends: every request extends the one before it.
	for i := first + 1; i < len(lr) && !isSummaryRequest(&llmtest.Req{Messages: lr[i].Messages}); i++ {
		prev, cur := lr[i-1].Messages, lr[i].Messages
		if len(cur) < len(prev) || !reflect.DeepEqual(prev[:len(prev)-1], cur[:len(prev)-1]) {
			t.Fatalf("request %d does not extend request %d while compaction is postponed", i, i-1)
		}
	}
}
