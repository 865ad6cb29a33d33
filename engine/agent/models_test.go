package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/tool"
)

// otherEndpoint starts a second scripted server and returns it with a
// client for it.
func otherEndpoint(t *testing.T, script llmtest.Script) (*llmtest.Server, llm.Model) {
	t.Helper()
	srv := llmtest.New(script)
	t.Cleanup(srv.Close)
	return srv, llm.NewOpenAI(llm.Config{BaseURL: srv.URL(), APIKey: "sk-other"})
}

func TestSwitchingTheModelMidSessionKeepsTheHistoryAndRecordsTheRepin(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("answer one")), nil)
	other, client := otherEndpoint(t, llmtest.Sequence(llmtest.Text("answer two")))
	s := h.session("switch")
	ctx := context.Background()
	if _, err := s.Run(ctx, "first question"); err != nil {
		t.Fatal(err)
	}
	if err := s.SwitchModel(ModelChoice{}); err != ErrNoClient {
		t.Errorf("a choice without a client: %v", err)
	}
	if err := s.SwitchModel(ModelChoice{Model: client, ModelName: "small-model", Profile: "local", ContextWindow: 32000}); err != nil {
		t.Fatal(err)
	}
	if s.Snapshot().Meta.Model != "small-model" || s.Snapshot().Meta.Profile != "local" || s.Snapshot().Window != 32000 {
		t.Errorf("after the switch: model %q, profile %q, window %d", s.Snapshot().Meta.Model, s.Snapshot().Meta.Profile, s.Snapshot().Window)
	}
	if _, err := s.Run(ctx, "second question"); err != nil {
		t.Fatal(err)
	}
	if n := len(h.srv.Requests()); n != 1 {
		t.Errorf("the first endpoint got %d requests; want only the first turn's", n)
	}
	reqs := other.Requests()
	if len(reqs) != 1 || reqs[0].Model != "small-model" {
		t.Fatalf("the new endpoint got %d requests (%+v)", len(reqs), reqs)
	}
	var texts []string
	for _, m := range reqs[0].Messages {
		texts = append(texts, m.Content)
	}
	all := strings.Join(texts, "\n")
	if !strings.Contains(all, "first question") || !strings.Contains(all, "answer one") || !strings.Contains(all, "second question") {
		t.Errorf("the new model did not get the whole conversation:\n%s", all)
	}
	rows, err := s.Audit().Ledger()
	if err != nil || len(rows) != 2 {
		t.Fatalf("ledger: %d rows, %v", len(rows), err)
	}
	if rows[0].Repin != "" || rows[1].Repin != "deepseek-chat → small-model (local)" || rows[1].Model != "small-model" {
		t.Errorf("rows = %+v / %+v; want the second to record the re-pin", rows[0], rows[1])
	}
	s.Close()

	// Reopened without naming a model, it keeps the one it switched to.
	cfg := h.cfg
	cfg.ModelName, cfg.Model = "", client
	r, err := Open(cfg, "switch")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Snapshot().Meta.Model != "small-model" || r.Snapshot().Meta.Profile != "local" || !r.Snapshot().Meta.OwnModel {
		t.Errorf("reopened on %q / %q (own %v)", r.Snapshot().Meta.Model, r.Snapshot().Meta.Profile, r.Snapshot().Meta.OwnModel)
	}
}

func TestOpeningOnAnotherModelRecordsTheRepin(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("one"), llmtest.Text("two")), nil)
	s := h.session("reopen")
	if _, err := s.Run(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cfg := h.cfg
	cfg.ModelName = "deepseek-reasoner"
	r, err := Open(cfg, "reopen")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Run(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	rows, _ := r.Audit().Ledger()
	if len(rows) != 2 || rows[1].Repin != "deepseek-chat → deepseek-reasoner" {
		t.Errorf("rows = %+v", rows)
	}
	if reqs := h.srv.Requests(); reqs[1].Model != "deepseek-reasoner" {
		t.Errorf("the request named %q", reqs[1].Model)
	}
}

func TestARoleTakesItsOwnModel(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("done"), llmtest.Text("next")), nil)
	cheap, client := otherEndpoint(t, llmtest.Sequence(llmtest.Text("brief: the answered bug is fixed")))
	h.cfg.Roles = map[ledger.Kind]ModelChoice{ledger.KindBrief: {Model: client, ModelName: "cheap-model"}}
	s := h.session("roles")
	ctx := context.Background()
	if _, err := s.Run(ctx, "fix the bug"); err != nil {
		t.Fatal(err)
	}
	if err := s.Compaction().NewCycle(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, "what next?"); err != nil {
		t.Fatal(err)
	}
	if reqs := cheap.Requests(); len(reqs) != 1 || reqs[0].Model != "cheap-model" || !isBrief(reqs[0].Messages) {
		t.Fatalf("the cheap endpoint got %+v; want the one brief", reqs)
	}
	for _, r := range h.srv.Requests() {
		if isBrief(r.Messages) {
			t.Error("the brief went to the session's own model")
		}
	}
	rows, _ := s.Audit().Ledger()
	kinds := map[ledger.Kind]string{}
	for _, r := range rows {
		kinds[r.Kind] = r.Model
	}
	if kinds[ledger.KindBrief] != "cheap-model" || kinds[ledger.KindTurn] != "deepseek-chat" {
		t.Errorf("ledger models by kind: %v", kinds)
	}
}

// isBrief reports whether messages are a hand-off brief request.
func isBrief(msgs []llmtest.Message) bool {
	return len(msgs) > 0 && strings.Contains(msgs[len(msgs)-1].Content, briefMarker)
}

func TestPromptCacheKeyIsTheSessionsIDOnEveryRequest(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(llmtest.Text("warm"), llmtest.Text("one"), llmtest.Text("brief"), llmtest.Text("two")), nil)
	h.cfg.PromptCacheKey = true
	s := h.session("keyed")
	ctx := context.Background()
	if _, err := s.WarmUp(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	if err := s.Compaction().NewCycle(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if !strings.Contains(string(r.Body), `"prompt_cache_key":"keyed"`) {
			t.Errorf("request %d has no prompt_cache_key of the session: %.200s", i, r.Body)
		}
	}
	plain := newHarness(t, llmtest.Sequence(llmtest.Text("one")), nil)
	if _, err := plain.session("plain").Run(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	if body := string(plain.srv.Requests()[0].Body); strings.Contains(body, "prompt_cache_key") {
		t.Error("an endpoint that does not take prompt_cache_key got one")
	}
}

func TestSubAgentsTakeTheirRolesModel(t *testing.T) {
	parent := llmtest.ScriptFunc(func(r *llmtest.Req) llmtest.Reply {
		if toolResults(r.Messages) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall("look", "say what a.txt holds", "explore")}}
		}
		return llmtest.Text("done")
	})
	h := newHarness(t, parent, tool.ApproveAll{})
	cheap, client := otherEndpoint(t, llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Text("Report: alpha.") }))
	h.cfg.Roles = map[ledger.Kind]ModelChoice{ledger.KindSubagent: {Model: client, ModelName: "cheap-model"}}
	s := h.session("sub-role")
	if _, err := s.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	for _, r := range h.srv.Requests() {
		if isChildReq(r.Messages) {
			t.Error("a sub-agent request went to the session's own model")
		}
	}
	reqs := cheap.Requests()
	if len(reqs) == 0 || reqs[0].Model != "cheap-model" || !isChildReq(reqs[0].Messages) {
		t.Fatalf("the role's endpoint got %d requests", len(reqs))
	}
	rows, _ := s.Audit().Ledger()
	for _, r := range rows {
		if r.Kind == ledger.KindSubagent && r.Model != "cheap-model" {
			t.Errorf("a sub-agent row names %q", r.Model)
		}
	}
}

// SwitchModel runs while the host reads the session's model from another
// goroutine (the app checks pasted pictures and draws the gauge while a
// switch is stored): run with -race, nothing may be read half written.
func TestReadingTheModelDuringASwitchIsSafe(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(), nil)
	_, client := otherEndpoint(t, llmtest.Sequence())
	s := h.session("race")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			_ = s.Snapshot().Vision
			_ = s.Snapshot().Window
			_ = s.Snapshot().CompactAt
			_ = s.Images().Check(nil)
		}
	}()
	for i := 0; i < 20; i++ {
		name := []string{"small-model", "deepseek-chat"}[i%2]
		if err := s.SwitchModel(ModelChoice{Model: client, ModelName: name, Vision: i%2 == 0}); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if s.Snapshot().Meta.Model != "deepseek-chat" || s.Snapshot().Vision {
		t.Errorf("after the switches: %q, vision %v", s.Snapshot().Meta.Model, s.Snapshot().Vision)
	}
}

// Picking the same model again with another image setting takes the
// setting: pictures are then sent.
func TestSwitchingToTheSameModelTakesItsVision(t *testing.T) {
	h := newHarness(t, llmtest.Sequence(), nil)
	s := h.session("same")
	if s.Snapshot().Vision {
		t.Fatal("the harness model sees images")
	}
	if err := s.SwitchModel(ModelChoice{Model: h.cfg.Model, ModelName: "deepseek-chat", Vision: true}); err != nil {
		t.Fatal(err)
	}
	if !s.Snapshot().Vision || !s.env.Vision {
		t.Errorf("vision %v, read_file %v; want both on", s.Snapshot().Vision, s.env.Vision)
	}
	if rows, _ := s.Audit().Ledger(); len(rows) != 0 || s.st.Repin != "" {
		t.Errorf("a vision change of the same model recorded a re-pin %q", s.st.Repin)
	}
}
