package compact

import (
	"slices"
	"testing"

	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/engine/transcript"
)

// TestActivatedSkillIsPinnedAndNeverTruncated: the result of a skill
// activation is pinned (its call by pairing), a skill's file read is not,
// and emergency truncation drops the messages around it instead.
func TestActivatedSkillIsPinnedAndNeverTruncated(t *testing.T) {
	act := call("c1", skill.ToolName, `{"name":"release"}`)
	file := call("c2", skill.ToolName, `{"name":"release","file":"notes.md"}`)
	read := call("c3", "read_file", `{"path":"big.txt"}`)
	msgs := [][]transcript.Message{
		{user("cut the release")},
		{calls("", act), result(act, "Skill release (user)\n\n"+filler("skill", 4000))},
		{calls("", file), result(file, filler("notes", 4000))},
		{calls("", read), result(read, filler("big", 4000))},
		{reply("read"), user("go on"), reply("ok"), user("and now?"), reply("done")},
	}
	log := slices.Concat(msgs...)
	pins := Pins(Input{Messages: log})
	reasons := map[int][]string{}
	for _, p := range pins {
		reasons[p.Index] = append(reasons[p.Index], p.Reason)
	}
	if !slices.Contains(reasons[2], reasonSkill) || !slices.Contains(reasons[1], reasonPair) {
		t.Errorf("the activation and its call are not pinned: %v", reasons)
	}
	if len(reasons[4]) > 0 || len(reasons[6]) > 0 {
		t.Errorf("a file read of the skill or another result is pinned: %v", reasons)
	}
	kept, dropped := Truncate(log, flat(len(log), 1000), 6000)
	if dropped == 0 {
		t.Fatal("nothing was truncated")
	}
	found := false
	for _, m := range kept {
		found = found || m.ToolCallID == "c1"
	}
	if !found {
		t.Error("emergency truncation dropped the activated skill")
	}
	checkLog(t, "truncated", kept)
}
