package compact

import (
	"testing"

	"github.com/tally-dev/tally/engine/transcript"
)

// TestPlannerTakesTheLogsCounts checks that the planner counts nothing the
// log already counted: Input.Tokens wins, then the count stored with the
// message, and only a message without either is counted.
func TestPlannerTakesTheLogsCounts(t *testing.T) {
	c := call("c1", "read_file", `{"path":"x.go"}`)
	log := transcript.NewAppendLog(nil, transcript.WireRules{})
	msgs := []transcript.Message{user("fix x.go"), calls("", c), result(c, filler("x", 3000)), reply("done")}
	for i := range msgs {
		msgs[i] = log.Append(msgs[i]).Msg
	}
	// Counts no formula would give, so taking them proves nothing was
	// counted again.
	msgs[1].Tokens = 1001
	msgs[2].Tokens = 1002
	msgs[3].Tokens, msgs[3].TokensKey = 0, "" // never counted
	in := Input{Messages: msgs, Tokens: []int{500}, PrefixTokens: 10}
	got := normalized(in).Tokens
	want := []int{500, 1001, 1002, MessageTokens(msgs[3])}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d counts %d; want %d", i, got[i], want[i])
		}
	}
	if p := PlanCascade(in); p.TokensBefore != 10+500+1001+1002+want[3] {
		t.Errorf("the plan starts from %d tokens; the counts add up to %d", p.TokensBefore, 10+500+1001+1002+want[3])
	}
	if MessageTokens(msgs[2]) != transcript.MessageTokens(msgs[2]) {
		t.Error("compact.MessageTokens is not transcript.MessageTokens")
	}
}
