package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/engine/transcript"
)

// TestActivatedSkillSurvivesCompactionVerbatim: the instructions an
// activation returned stay in the log, byte for byte, through a
// compaction that summarises the turns around them, and a second
// activation after it points at them instead of loading them again.
func TestActivatedSkillSurvivesCompactionVerbatim(t *testing.T) {
	var body strings.Builder
	for i := 0; i < 80; i++ {
		fmt.Fprintf(&body, "Release step %d: check the changelog entry %d and the version file before tagging.\n", i, i)
	}
	turn := 0
	script := llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		if isSummaryRequest(req) {
			return llmtest.Text("The user is preparing a release; big files were read.")
		}
		if req.ToolResultsSinceHuman() > 0 {
			return llmtest.Text("Noted.")
		}
		turn++
		switch {
		case turn == 1 || strings.Contains(req.LastHuman(), "again"):
			return llmtest.Call(skill.ToolName, `{"name":"release"}`)
		default:
			return llmtest.Call("read_file", fmt.Sprintf(`{"path":"g%d.txt"}`, turn))
		}
	})
	sw := newSmallWindow(t, 1_000_000, script) // only the manual compaction runs
	user := t.TempDir()
	writeSkill(t, filepath.Join(user, "skills"), "release", "Cut a release.", body.String())
	sw.cfg.UserConfigDir = user
	s := sw.session("skill-pin")
	ctx := context.Background()
	if _, err := s.Run(ctx, "Cut the release."); err != nil {
		t.Fatal(err)
	}
	activation := func() (int, transcript.Message) {
		msgs := s.Snapshot().Messages()
		for i := range skill.Activations(msgs) {
			if strings.HasPrefix(msgs[i].Text(), "Skill release (") {
				return i, msgs[i]
			}
		}
		return -1, transcript.Message{}
	}
	_, before := activation()
	if !strings.Contains(before.Text(), "Release step 79") {
		t.Fatalf("the skill was not loaded: %q", before.Text())
	}
	for i := 0; i < 6; i++ {
		if _, err := s.Run(ctx, fmt.Sprintf("Read the next big file (%d).", i)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Compaction().Apply(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cleared := 0
	for _, m := range s.Snapshot().Messages() {
		if m.Role == transcript.Tool && m.ToolName == "read_file" && compact.Shrunk(m.Text()) {
			cleared++
		}
	}
	if res.TokensAfter >= res.TokensBefore || cleared == 0 {
		t.Fatalf("the compaction cleared no file read: %d -> %d tokens", res.TokensBefore, res.TokensAfter)
	}
	i, after := activation()
	if i < 0 || after.Text() != before.Text() || after.ToolCallID != before.ToolCallID {
		t.Fatalf("the skill's instructions did not survive the compaction verbatim (index %d):\n%.300s", i, after.Text())
	}
	if err := transcript.CheckPairing(s.Snapshot().Messages()); err != nil {
		t.Fatal(err)
	}

	if _, err := s.Run(ctx, "Follow the release skill again."); err != nil {
		t.Fatal(err)
	}
	sw.checkRequests(t)
	reqs := sw.srv.Requests()
	again := sw.toolResult(reqs[len(reqs)-1])
	if !strings.Contains(again, "already active") || !strings.Contains(again, before.ToolCallID) || strings.Contains(again, "Release step") {
		t.Fatalf("the second activation: %q", again)
	}
	if got := strings.Count(string(reqs[len(reqs)-1].Body), "Release step 79"); got != 1 {
		t.Errorf("the last request holds the instructions %d times, want once", got)
	}
}
