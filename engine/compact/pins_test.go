package compact

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
)

func TestShouldCompact(t *testing.T) {
	cases := []struct {
		name                     string
		level, pinned, threshold int
		want                     bool
	}{
		{"article example: 910K summable under the docked 927K", 950_000, 40_000, 967_000, false},
		{"summable crosses the docked threshold", 968_000, 40_000, 967_000, true},
		{"exactly at the threshold does not fire", 967_000, 40_000, 967_000, false},
		{"nothing pinned", 968_000, 0, 967_000, true},
		{"everything pinned: nothing to summarise", 990_000, 990_000, 967_000, false},
		{"pins above the threshold", 990_000, 980_000, 967_000, true},
		{"no threshold", 990_000, 0, 0, false},
		{"negative pinned", 990_000, -1, 967_000, false},
		{"zero level", 0, 0, 967_000, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ShouldCompact(c.level, c.pinned, c.threshold); got != c.want {
				t.Errorf("ShouldCompact(%d, %d, %d) = %v; want %v", c.level, c.pinned, c.threshold, got, c.want)
			}
		})
	}
}

func TestMentionsPath(t *testing.T) {
	cases := []struct {
		name, text, path string
		want             bool
	}{
		{"plain mention", "open pkg/a.go now", "pkg/a.go", true},
		{"at start and end", "pkg/a.go", "pkg/a.go", true},
		{"tail of a longer name", "see data.go", "a.go", false},
		{"under another directory", "see src/a.go", "a.go", false},
		{"head of a longer name", "see a.gox", "a.go", false},
		{"dot-slash prefix", "see ./a.go", "a.go", true},
		{"sentence full stop", "I edited a.go.", "a.go", true},
		{"extension continues", "a.go.bak", "a.go", false},
		{"quoted in JSON", `{"path":"a.go"}`, "a.go", true},
		{"second occurrence matches", "data.go and a.go", "a.go", true},
		{"empty text", "", "a.go", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mentionsPath(c.text, c.path); got != c.want {
				t.Errorf("mentionsPath(%q, %q) = %v; want %v", c.text, c.path, got, c.want)
			}
		})
	}
}

func reasonsOf(pins []Pin, i int) []string {
	var out []string
	for _, p := range pins {
		if p.Index == i {
			out = append(out, p.Reason)
		}
	}
	return out
}

func TestPins(t *testing.T) {
	rd := call("r", "read_file", `{"path":"x.go"}`)
	a := call("a", "list_dir", `{}`)
	b := call("b", "run_shell", `{"cmd":"make"}`)
	wr := call("w", "write_file", `{"path":"y.go"}`)
	pad := func(msgs ...transcript.Message) []transcript.Message {
		// Four trailing replies keep the rule under test away from "recent"
		// and a user text at the start keeps "user-text" there.
		out := append([]transcript.Message{user("start")}, msgs...)
		return append(out, reply("r1"), reply("r2"), reply("r3"), reply("r4"))
	}
	cases := []struct {
		name string
		in   Input
		want map[int][]string // index → reasons; indexes not listed are unpinned
	}{
		{
			name: "empty log",
			in:   Input{},
			want: map[int][]string{},
		},
		{
			name: "short log pins everything recent and the user text",
			in:   Input{Messages: []transcript.Message{user("hi"), reply("hello")}},
			want: map[int][]string{0: {reasonRecent, reasonUserText, reasonUserWords}, 1: {reasonRecent}},
		},
		{
			name: "last four and the newest user text",
			in:   Input{Messages: pad(user("older"), reply("x"))},
			want: map[int][]string{3: {reasonRecent}, 4: {reasonRecent}, 5: {reasonRecent}, 6: {reasonRecent}, 0: {reasonUserWords}, 1: {reasonUserText, reasonUserWords}},
		},
		{
			name: "working-set path in a result pins its call too",
			in:   Input{Messages: pad(calls("", rd), result(rd, "package x")), WorkingSet: []string{"x.go"}},
			want: map[int][]string{1: {reasonWorkingSet}, 2: {reasonPair}, 0: {reasonUserText, reasonUserWords}, 3: {reasonRecent}, 4: {reasonRecent}, 5: {reasonRecent}, 6: {reasonRecent}},
		},
		{
			name: "tail of a longer file name does not pin",
			in:   Input{Messages: pad(reply("edited xx.go")), WorkingSet: []string{"x.go"}},
			want: map[int][]string{0: {reasonUserText, reasonUserWords}, 2: {reasonRecent}, 3: {reasonRecent}, 4: {reasonRecent}, 5: {reasonRecent}},
		},
		{
			name: "failed result pins its call and sibling result",
			in:   Input{Messages: pad(calls("", a, b), result(a, "a.txt"), failure(b, "make: no rule"))},
			want: map[int][]string{1: {reasonPair}, 2: {reasonPair}, 3: {reasonError}, 0: {reasonUserText, reasonUserWords}, 4: {reasonRecent}, 5: {reasonRecent}, 6: {reasonRecent}, 7: {reasonRecent}},
		},
		{
			name: "error words in text, any case",
			in:   Input{Messages: pad(reply("Traceback (most recent call last)"), reply("the build FAILED"), reply("Error: nope"), reply("PANIC at the disco"))},
			want: map[int][]string{1: {reasonError}, 2: {reasonError}, 3: {reasonError}, 4: {reasonError}, 0: {reasonUserText, reasonUserWords}, 5: {reasonRecent}, 6: {reasonRecent}, 7: {reasonRecent}, 8: {reasonRecent}},
		},
		{
			name: "engine status never pins itself",
			in:   Input{Messages: pad(transcript.Injected(transcript.KindStatus, "<agent_status>1 failed call</agent_status>", t0))},
			want: map[int][]string{0: {reasonUserText, reasonUserWords}, 2: {reasonRecent}, 3: {reasonRecent}, 4: {reasonRecent}, 5: {reasonRecent}},
		},
		{
			name: "write call and diff text are patches",
			in:   Input{Messages: pad(calls("", wr), result(wr, "wrote y.go"), reply("diff --git a/z b/z"), reply("+++ b/z"))},
			want: map[int][]string{1: {reasonPatch}, 2: {reasonPatch}, 3: {reasonPatch}, 4: {reasonPatch}, 0: {reasonUserText, reasonUserWords}, 5: {reasonRecent}, 6: {reasonRecent}, 7: {reasonRecent}, 8: {reasonRecent}},
		},
		{
			name: "several reasons keep their fixed order",
			in:   Input{Messages: []transcript.Message{reply("warm up"), user("x.go failed: error: boom")}, WorkingSet: []string{"x.go"}},
			want: map[int][]string{0: {reasonRecent}, 1: {reasonRecent, reasonWorkingSet, reasonError, reasonUserText, reasonUserWords}},
		},
		{
			name: "recent window starting inside a call group pins the call",
			in:   Input{Messages: []transcript.Message{user("go"), calls("", a, b), result(a, "1"), result(b, "2"), reply("r1"), reply("r2")}},
			want: map[int][]string{0: {reasonUserText, reasonUserWords}, 1: {reasonPair}, 2: {reasonRecent}, 3: {reasonRecent}, 4: {reasonRecent}, 5: {reasonRecent}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pins := Pins(c.in)
			got := map[int][]string{}
			for _, p := range pins {
				got[p.Index] = append(got[p.Index], p.Reason)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("pins = %v\nwant   %v", got, c.want)
			}
			if !slices.IsSortedFunc(pins, func(a, b Pin) int { return a.Index - b.Index }) {
				t.Errorf("pins not sorted by index: %s", describePins(pins))
			}
		})
	}
}

func TestPinsWorkingSetLimits(t *testing.T) {
	t.Run("only the 12 most recent paths are scanned", func(t *testing.T) {
		var ws []string
		for i := range 13 {
			ws = append(ws, fmt.Sprintf("f%02d.go", i))
		}
		msgs := []transcript.Message{user("start"), reply("touching f00.go"), reply("touching f12.go")}
		msgs = append(msgs, reply("a"), reply("b"), reply("c"), reply("d"))
		pins := Pins(Input{Messages: msgs, WorkingSet: ws})
		if r := reasonsOf(pins, 1); len(r) != 0 {
			t.Errorf("the oldest path f00.go pinned message 1: %v", r)
		}
		if r := reasonsOf(pins, 2); !slices.Contains(r, reasonWorkingSet) {
			t.Errorf("f12.go did not pin message 2: %v", r)
		}
	})
	t.Run("at most 24 messages, the newest", func(t *testing.T) {
		msgs := []transcript.Message{user("start")}
		for range 30 {
			msgs = append(msgs, reply("editing x.go"))
		}
		pins := Pins(Input{Messages: msgs, WorkingSet: []string{"x.go"}})
		n, oldest := 0, len(msgs)
		for _, p := range pins {
			if p.Reason == reasonWorkingSet {
				n++
				oldest = min(oldest, p.Index)
			}
		}
		if n != workingSetCap || oldest != len(msgs)-workingSetCap {
			t.Errorf("working-set pins = %d from index %d; want %d from %d", n, oldest, workingSetCap, len(msgs)-workingSetCap)
		}
	})
}

func TestPinnedTokensAndIndexes(t *testing.T) {
	in := sessionInput()
	pins := Pins(in)
	idx := PinnedIndexes(pins)
	if !slices.IsSorted(idx) || len(slices.Compact(slices.Clone(idx))) != len(idx) {
		t.Fatalf("PinnedIndexes not sorted and distinct: %v", idx)
	}
	want := 0
	for _, i := range idx {
		want += in.Tokens[i]
	}
	if got := PinnedTokens(in, pins); got != want {
		t.Errorf("PinnedTokens = %d; want %d", got, want)
	}
	if got := describePins(pins); got == "" {
		t.Error("session has no pins")
	}
}

func TestWorkingSetPinsAreTrimmedToTheBudget(t *testing.T) {
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	msgs := []transcript.Message{transcript.UserText("", "read the files", at)}
	var ws []string
	for i := 0; i < 8; i++ {
		p := fmt.Sprintf("f%d.txt", i)
		ws = append(ws, p)
		c := transcript.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q}`, p)}
		msgs = append(msgs, transcript.AssistantReply("", "", []transcript.ToolCall{c}, at),
			transcript.ToolResult(c, p+": "+strings.Repeat("data ", 400), false, at))
	}
	msgs = append(msgs, transcript.AssistantReply("done", "", nil, at))
	in := Input{Messages: msgs, WorkingSet: ws, Threshold: 100_000}
	all := PinnedTokens(in, Pins(in))
	in.Threshold = all // the pins alone would take the whole threshold
	got := PinnedTokens(in, Pins(in))
	if got > in.Threshold/2 {
		t.Errorf("pinned %d tokens; want at most half of the threshold %d", got, in.Threshold)
	}
	pins := Pins(in)
	recent := false
	for _, p := range pins {
		if p.Reason == reasonWorkingSet && strings.Contains(msgs[p.Index].Text(), "f7.txt") {
			recent = true
		}
		if p.Reason == reasonWorkingSet && strings.Contains(msgs[p.Index].Text(), "f0.txt") {
			t.Error("the oldest working-set path is still pinned")
		}
	}
	if !recent {
		t.Error("the newest working-set path lost its pin")
	}
}

// A compaction in a later cycle summarised away the [CYCLE STATE] seed,
// and with it the user's words and the work record it carried.
func TestSeedIsSummarisedAway(t *testing.T) {
	seed := transcript.Injected(transcript.KindSeed, "[CYCLE STATE]\nWhat the user said in earlier cycles: keep the API", t0)
	msgs := []transcript.Message{seed, reply("ok")}
	for i := range 10 {
		c := call(fmt.Sprint("c", i), "read_file", `{"path":"x.go"}`)
		msgs = append(msgs, calls("", c), result(c, filler("r", 400)))
	}
	msgs = append(msgs, user("go on"))
	in := Input{Messages: msgs, Tokens: flat(len(msgs), 100), Threshold: 800, Window: 1000}
	pinned := pinnedSet(Pins(in))
	if !pinned[0] {
		t.Error("the cycle's seed is not pinned")
	}
	in.NoFacts = true
	if pinnedSet(Pins(in))[0] {
		t.Error("with NoFacts the seed is pinned")
	}
}
