package purge

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/transcript"
)

// TestPurgeCountsWithTheLogsCounts checks that a purge preview counts each
// message as the log did (the count stored with it), so it agrees with the
// context gauge, and counts an edited message afresh.
func TestPurgeCountsWithTheLogsCounts(t *testing.T) {
	log := transcript.NewAppendLog(nil, transcript.WireRules{})
	msgs := sample()
	sum := 0
	for i := range msgs {
		msgs[i] = log.Append(msgs[i]).Msg
		msgs[i].Tokens += 100 // no formula gives these: taking them proves nothing was recounted
		sum += msgs[i].Tokens
	}
	p := Apply(msgs, []Op{{Op: "remove", Msg: 5}, {Op: "replace", Msg: 6, Pattern: `sk-\d+`, With: "[redacted]"}})
	if p.Before != sum {
		t.Errorf("the purge counts %d tokens before; the log's counts add up to %d", p.Before, sum)
	}
	for _, c := range p.Changes {
		if c.Before != msgs[c.Msg-1].Tokens {
			t.Errorf("message %d counts %d before; the log counted %d", c.Msg, c.Before, msgs[c.Msg-1].Tokens)
		}
		if c.Action == "replace" {
			edited := p.Messages[len(p.Messages)-1]
			if edited.Tokens != 0 || c.After != transcript.MessageTokens(edited) {
				t.Errorf("the edited message carries %d tokens and counts %d after; it costs %d", edited.Tokens, c.After, transcript.MessageTokens(edited))
			}
		}
	}
	if want := sum - msgs[4].Tokens - msgs[5].Tokens + p.Changes[1].After; p.After != want {
		t.Errorf("the purge counts %d tokens after; want %d", p.After, want)
	}
	if !strings.Contains(List(msgs), "3. tool read_file, "+strconv.Itoa(msgs[2].Tokens)+" tokens") {
		t.Errorf("the list does not show the log's count %d:\n%s", msgs[2].Tokens, List(msgs))
	}
}
