package transcript

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var histAt = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func say(role Role, s string) Message {
	return Message{Role: role, Blocks: []Block{{Type: BlockText, Text: s}}, Time: histAt}
}

// rewrite records before → after the way a session's rebuild does.
func rewriteOf(reason string, before, after []Message) Rewrite {
	gone, from := Match(before, after)
	return Rewrite{Record: RebuildRecord{Reason: reason, BeforeLen: len(before), AfterLen: len(after), From: from}, Gone: gone}
}

// describe writes a history as one line per step.
func describe(steps []Step) string {
	var b strings.Builder
	for _, s := range steps {
		if s.Rewrite >= 0 {
			fmt.Fprintf(&b, "ROW%d\n", s.Rewrite)
			continue
		}
		fmt.Fprintf(&b, "%s gone=%d written=%d log=%d\n", s.Msg.Text(), s.GoneBy, s.WrittenBy, s.LogIndex)
	}
	return b.String()
}

func TestHistoryAfterACompactionAndARewind(t *testing.T) {
	u1, a1, a1b := say(User, "u1"), say(Assistant, "a1"), say(Assistant, "a1b")
	u2, a2, sum := say(User, "u2"), say(Assistant, "a2"), say(User, "summary")
	u3, a3, u4, a4 := say(User, "u3"), say(Assistant, "a3"), say(User, "u4"), say(Assistant, "a4")

	l0 := []Message{u1, a1, a1b, u2, a2}
	after1 := []Message{u1, sum, u2, a2} // the compaction keeps the user's words and the tail
	l1 := append(append([]Message(nil), after1...), u3, a3)
	after2 := append([]Message(nil), after1...) // rewind to turn 3
	live := append(append([]Message(nil), after2...), u4, a4)
	rws := []Rewrite{rewriteOf("compaction", l0, after1), rewriteOf("rewind to turn 3", l1, after2)}

	steps, ok := History(rws, live)
	if !ok {
		t.Fatal("History refused records that fit")
	}
	want := `u1 gone=-1 written=-1 log=0
a1 gone=0 written=-1 log=-1
a1b gone=0 written=-1 log=-1
u2 gone=-1 written=-1 log=2
a2 gone=-1 written=-1 log=3
ROW0
summary gone=-1 written=0 log=1
u3 gone=1 written=-1 log=-1
a3 gone=1 written=-1 log=-1
ROW1
u4 gone=-1 written=-1 log=4
a4 gone=-1 written=-1 log=5
`
	if got := describe(steps); got != want {
		t.Errorf("history:\n%s\nwant:\n%s", got, want)
	}
}

func TestHistoryOfACycleThatStartedFromASeed(t *testing.T) {
	seed, u1, a1 := say(User, "seed"), say(User, "u1"), say(Assistant, "a1")
	start := Rewrite{Record: RebuildRecord{Reason: "new cycle", BeforeLen: 9, AfterLen: 1, From: []int{-1}, Start: true}}
	steps, ok := History([]Rewrite{start}, []Message{seed, u1, a1})
	if !ok {
		t.Fatal("History refused a cycle's start")
	}
	want := "ROW0\nseed gone=-1 written=0 log=0\nu1 gone=-1 written=-1 log=1\na1 gone=-1 written=-1 log=2\n"
	if got := describe(steps); got != want {
		t.Errorf("history:\n%s\nwant:\n%s", got, want)
	}
}

func TestHistoryRefusesRecordsItCannotPlace(t *testing.T) {
	u1, a1 := say(User, "u1"), say(Assistant, "a1")
	good := rewriteOf("compaction", []Message{u1, a1}, []Message{u1})
	for name, rw := range map[string]Rewrite{
		"no From (an older Tally)": {Record: RebuildRecord{BeforeLen: 2, AfterLen: 1}, Gone: good.Gone},
		"index out of range":       {Record: good.Record, Gone: []Superseded{{Index: 7, Message: a1}}},
		"a position twice":         {Record: good.Record, Gone: []Superseded{{Index: 0, Message: a1}}},
		"a position left empty":    {Record: RebuildRecord{BeforeLen: 3, AfterLen: 1, From: []int{0}}, Gone: good.Gone},
		"longer than the log":      {Record: RebuildRecord{BeforeLen: 2, AfterLen: 4, From: []int{0, -1, -1, -1}}, Gone: good.Gone},
	} {
		if _, ok := History([]Rewrite{rw}, []Message{u1}); ok {
			t.Errorf("%s: History accepted it", name)
		}
	}
}

func FuzzHistoryNeverPanics(f *testing.F) {
	f.Add(3, 2, []byte{0, 1, 255, 2})
	f.Fuzz(func(t *testing.T, before, after int, from []byte) {
		before, after = before%50, after%50
		if before < 0 || after < 0 {
			return
		}
		rec := RebuildRecord{BeforeLen: before, AfterLen: after}
		for _, b := range from {
			rec.From = append(rec.From, int(int8(b)))
		}
		live := make([]Message, after+1)
		_, _ = History([]Rewrite{{Record: rec, Gone: []Superseded{{Index: before - 1}}}}, live)
	})
}
