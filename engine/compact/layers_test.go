package compact

import (
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
)

func TestIntakeReportsWithoutChanging(t *testing.T) {
	rd := call("r", "read_file", `{"path":"big.log"}`)
	msgs := []transcript.Message{
		user("read it"), calls("", rd),
		result(rd, "head\n[... truncated: original 48,213 bytes, omitted 36,213; read a narrower range ...]\ntail"),
	}
	in := Input{Messages: msgs, Tokens: []int{10, 10, 3000}, Level: 5000, Threshold: 4000}
	out, rep := Intake(in, Pins(in))
	if !rep.Ran || len(rep.Changes) != 1 || rep.Changes[0].Index != 2 || rep.Changes[0].Action != ActionIntake {
		t.Fatalf("intake report = %+v", rep)
	}
	if rep.TokensBefore != rep.TokensAfter || out.Level != 5000 || rep.Enough {
		t.Errorf("intake changed the level: %+v, level %d", rep, out.Level)
	}
	if out.Messages[2].Text() != msgs[2].Text() {
		t.Error("intake changed a message")
	}
	checkLog(t, "intake", out.Messages)
}

// microInput is a log of n unpinned reads, each tokens k, followed by a
// pinned tail.
func microInput(n, size int) Input {
	msgs := []transcript.Message{user("audit the repo")}
	for i := range n {
		c := call(string(rune('a'+i)), "read_file", `{"path":"f`+string(rune('a'+i))+`.go"}`)
		msgs = append(msgs, calls("", c), result(c, filler("f", size)))
	}
	msgs = append(msgs, user("now summarise"), reply("a"), reply("b"), reply("c"))
	toks := flat(len(msgs), 50)
	for i := 2; i < 2*n+1; i += 2 {
		toks[i] = 2000
	}
	in := Input{Messages: msgs, Tokens: toks, PrefixTokens: 1000, Now: t0.Add(5 * time.Minute)}
	in.Level = in.PrefixTokens + sum(toks)
	return in
}

func TestMicro(t *testing.T) {
	cases := []struct {
		name        string
		n, size     int
		idle        time.Duration
		overBy      int // threshold = level - overBy
		force       bool
		wantCleared int
		wantSkipped bool
	}{
		{"not stale: small results, recent reply", 3, 1000, 5 * time.Minute, 100, false, 0, true},
		{"idle an hour clears until it fits", 3, 1000, 61 * time.Minute, 100, false, 1, false},
		{"idle exactly 60 min counts", 3, 1000, 60 * time.Minute, 3000, false, 2, false},
		{"over 32 KB of results clears oldest first", 3, 12 << 10, 5 * time.Minute, 100, false, 1, false},
		{"force clears every stale result", 3, 12 << 10, 5 * time.Minute, -100_000, true, 3, false},
		{"under the threshold: skipped", 3, 12 << 10, 5 * time.Minute, -1, false, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := microInput(c.n, c.size)
			in.Now = t0.Add(c.idle)
			in.Threshold = in.Level - c.overBy
			in.Force = c.force
			before := append([]transcript.Message(nil), in.Messages...)
			out, rep := Micro(in, Pins(in))
			if got := len(rep.Changes); got != c.wantCleared {
				t.Fatalf("cleared %d; want %d (%+v)", got, c.wantCleared, rep)
			}
			if (rep.Skipped != "") != c.wantSkipped {
				t.Errorf("skipped = %q; want skipped %v", rep.Skipped, c.wantSkipped)
			}
			for k, ch := range rep.Changes {
				if ch.Index != 2+2*k {
					t.Errorf("change %d at #%d; want oldest first at #%d", k, ch.Index, 2+2*k)
				}
				text := out.Messages[ch.Index].Text()
				if !strings.HasPrefix(text, "[tool result cleared to save context: read_file {\"path\":") || !strings.Contains(text, "call the tool again") {
					t.Errorf("placeholder = %q", text)
				}
				if out.Messages[ch.Index].ToolCallID != before[ch.Index].ToolCallID {
					t.Error("placeholder lost its call ID")
				}
			}
			if out.Level != rep.TokensAfter || rep.TokensAfter > rep.TokensBefore {
				t.Errorf("level %d, report %d → %d", out.Level, rep.TokensBefore, rep.TokensAfter)
			}
			for i := range before {
				if in.Messages[i].Text() != before[i].Text() {
					t.Fatal("Micro modified its input")
				}
			}
			checkLog(t, "micro", out.Messages)
		})
	}
}

func TestMicroLeavesPinnedResults(t *testing.T) {
	in := sessionInput()
	in.Threshold = 1
	in.Now = t0.Add(2 * time.Hour)
	pins := Pins(in)
	pinned := pinnedSet(pins)
	out, rep := Micro(in, pins)
	if len(rep.Changes) == 0 {
		t.Fatal("nothing cleared")
	}
	for _, c := range rep.Changes {
		if pinned[c.Index] {
			t.Errorf("pinned message #%d was cleared", c.Index)
		}
	}
	for i := range pinned {
		if out.Messages[i].Text() != in.Messages[i].Text() {
			t.Errorf("pinned message #%d changed", i)
		}
	}
	// A second pass finds nothing left to clear.
	_, again := Micro(out, pins)
	if len(again.Changes) != 0 {
		t.Errorf("second micro pass cleared %d placeholders", len(again.Changes))
	}
}

func TestPrune(t *testing.T) {
	same := filler("same", 20_000)
	mk := func(texts ...string) Input {
		msgs := []transcript.Message{user("refactor")}
		for i, tx := range texts {
			args := `{"path":"a.go","limit":10}`
			if i%2 == 1 {
				args = `{ "limit": 10, "path": "a.go" }` // same call, other key order
			}
			c := call(string(rune('a'+i)), "read_file", args)
			msgs = append(msgs, calls("", c), result(c, tx))
		}
		msgs = append(msgs, user("go on"), reply("1"), reply("2"), reply("3"))
		toks := flat(len(msgs), 20)
		for i := 2; i < 2*len(texts)+1; i += 2 {
			toks[i] = 5000
		}
		in := Input{Messages: msgs, Tokens: toks, PrefixTokens: 500}
		in.Level = in.PrefixTokens + sum(toks)
		return in
	}
	t.Run("keeps the newest copy and prunes older ones newest first", func(t *testing.T) {
		in := mk(same, same, same)
		in.Force = true
		out, rep := Prune(in, Pins(in))
		if len(rep.Changes) != 2 || rep.Changes[0].Index != 4 || rep.Changes[1].Index != 2 {
			t.Fatalf("changes = %+v", rep.Changes)
		}
		if out.Messages[6].Text() != same {
			t.Error("newest copy was changed")
		}
		got := out.Messages[2].Text()
		if !strings.HasPrefix(got, `[pruned: identical to a later read_file {"limit":10,"path":"a.go"} result; this copy had 20,000 chars]`) {
			t.Errorf("prune line = %q", got)
		}
		checkLog(t, "prune", out.Messages)
	})
	t.Run("different content is superseded, not identical", func(t *testing.T) {
		in := mk(filler("old", 20_000), filler("new", 20_000))
		in.Force = true
		out, _ := Prune(in, Pins(in))
		if got := out.Messages[2].Text(); !strings.HasPrefix(got, "[pruned: superseded by a later read_file") {
			t.Errorf("prune line = %q", got)
		}
	})
	t.Run("stops at the 16 KB check once under the threshold", func(t *testing.T) {
		in := mk(same, same, same, same)
		in.Threshold = in.Level - 100
		_, rep := Prune(in, Pins(in))
		if len(rep.Changes) != 1 || !rep.Enough {
			t.Errorf("pruned %d (enough %v); want 1 then stop", len(rep.Changes), rep.Enough)
		}
	})
	t.Run("different arguments are not duplicates", func(t *testing.T) {
		a, b := call("a", "read_file", `{"path":"a.go"}`), call("b", "read_file", `{"path":"b.go"}`)
		msgs := []transcript.Message{user("x"), calls("", a), result(a, same), calls("", b), result(b, same), reply("1"), reply("2"), reply("3"), reply("4")}
		in := Input{Messages: msgs, Force: true}
		_, rep := Prune(in, Pins(in))
		if len(rep.Changes) != 0 {
			t.Errorf("pruned %+v", rep.Changes)
		}
	})
	t.Run("orphan result without arguments is left alone", func(t *testing.T) {
		o := transcript.Message{Role: transcript.Tool, ToolCallID: "gone", ToolName: "read_file", Blocks: []transcript.Block{{Type: transcript.BlockText, Text: same}}}
		in := Input{Messages: []transcript.Message{user("x"), o, o, reply("1"), reply("2"), reply("3"), reply("4")}, Force: true}
		_, rep := Prune(in, Pins(in))
		if len(rep.Changes) != 0 {
			t.Errorf("pruned orphans: %+v", rep.Changes)
		}
	})
	t.Run("pinned older copy stays", func(t *testing.T) {
		in := mk(same, same)
		in.Force = true
		in.WorkingSet = nil
		in.Messages[2].IsError = true
		out, rep := Prune(in, Pins(in))
		if len(rep.Changes) != 0 || out.Messages[2].Text() != same {
			t.Errorf("pinned copy pruned: %+v", rep.Changes)
		}
	})
}
