package workbench

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// TestATurnFallsBackToTheNextProfileAndTheLedgerSaysSo: the main
// connection rate-limits longer than the wait allowed; the turn goes on
// with the backup profile (its own key on its own server only), finishes
// there, and the ledger row names the switch and the model that answered.
// The effort set for the session then reaches the backup's next request
// and its row.
func TestATurnFallsBackToTheNextProfileAndTheLedgerSaysSo(t *testing.T) {
	down := llmtest.New(llmtest.ScriptFunc(func(*llmtest.Req) llmtest.Reply { return llmtest.Reply{Fault: llmtest.Fault429} }),
		llmtest.WithRetryAfter(3600), llmtest.WithAPIKey("sk-main"))
	defer down.Close()
	up := llmtest.New(llmtest.Sequence(llmtest.Text("answered by the backup"), llmtest.Text("thought hard")),
		llmtest.WithAPIKey("sk-backup"), llmtest.WithModels([]string{"backup-model"}))
	defer up.Close()
	w := bench(t, nil)
	s := Settings{BaseURL: down.URL(), Model: "primary-model", APIKey: "sk-main",
		Prices: map[string]Price{"backup-model": {CacheHit: 0.1, CacheMiss: 1, Completion: 2}}}
	s, err := s.PutProfile(Profile{Name: "backup", BaseURL: up.URL(), Model: "backup-model", APIKey: "sk-backup"})
	if err == nil {
		s, err = s.SetFallback([]string{"backup"})
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var fallbacks []string
	cfg, err := w.Config(SessionOptions{OnEvent: func(e agent.Event) {
		if e.Kind == agent.EventRetry && e.Retry.Fallback != "" {
			mu.Lock()
			fallbacks = append(fallbacks, e.Retry.Fallback)
			mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserConfigDir = ""
	sess, err := agent.Create(cfg, "fb", t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.Run(context.Background(), "hello")
	if err != nil {
		t.Fatalf("the turn failed instead of falling back: %v", err)
	}
	if !strings.Contains(res.Answer, "answered by the backup") {
		t.Errorf("the turn's answer: %q", res.Answer)
	}
	mu.Lock()
	if len(fallbacks) != 1 || fallbacks[0] != "primary-model → backup-model (backup)" {
		t.Errorf("the switch was announced as %q", fallbacks)
	}
	mu.Unlock()
	if n := len(down.Requests()); n != 1 {
		t.Errorf("the main connection got %d requests, want 1 (its wait was too long to retry)", n)
	}
	for _, r := range append(down.Requests(), up.Requests()...) {
		if r.Invalid {
			t.Errorf("a request was refused (a key on the wrong server?): %d %s", r.Status, r.Error)
		}
	}
	rows, err := w.Ledger("fb")
	if err != nil || len(rows) != 1 {
		t.Fatalf("ledger %+v, %v", rows, err)
	}
	if r := rows[0]; r.Model != "backup-model" || !strings.HasPrefix(r.Fallback, "primary-model → backup-model (backup): rate limited") {
		t.Errorf("the ledger row: model %q fallback %q", r.Model, r.Fallback)
	}

	// The effort: recorded, sent from the next request on, on the row.
	if err := w.SetEffort("fb", EffortSession, "high"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Run(context.Background(), "think"); err != nil {
		t.Fatal(err)
	}
	got := up.Requests()
	if body := string(got[len(got)-1].Body); !strings.Contains(body, `"chat_template_kwargs":{"enable_thinking":true,"reasoning_effort":"high"}`) {
		t.Errorf("the effort did not reach the request: %s", body)
	}
	if strings.Contains(string(got[0].Body), "enable_thinking") {
		t.Error("the first request, before the change, carried an effort")
	}
	rows, _ = w.Ledger("fb")
	if r := rows[len(rows)-1]; r.Effort != "high" || r.Fallback != "" || r.Model != "backup-model" {
		t.Errorf("the second row: effort %q fallback %q model %q", r.Effort, r.Fallback, r.Model)
	}
	if h, err := w.EffortHistory("fb"); err != nil || len(h) != 1 || h[0].Level != "high" || h[0].Role != EffortSession {
		t.Errorf("the recorded changes: %+v, %v", h, err)
	}
	if e := w.Efforts("fb"); e[EffortSession] != "high" || e[RoleSummaries] != "high" {
		t.Errorf("the efforts shown: %v", e)
	}
	// A role's own level beats the session's for that role's calls only.
	if err := w.SetEffort("fb", RoleSummaries, "off"); err != nil {
		t.Fatal(err)
	}
	if b := w.efforts(); b.Effort("fb", "summary") != "off" || b.Effort("fb", "subagent") != "high" || b.Effort("fb", "") != "high" {
		t.Errorf("summary %q, subagent %q, turn %q", b.Effort("fb", "summary"), b.Effort("fb", "subagent"), b.Effort("fb", ""))
	}
	if err := w.SetEffort("fb", "poems", "low"); err == nil {
		t.Error("an unknown role took an effort")
	}
}

// TestFallbackPreviewAndChecks: the preview prices the context re-sent at
// the fallback's miss price; a chain names saved profiles, each once, at
// most three.
func TestFallbackPreviewAndChecks(t *testing.T) {
	w := profiled(t)
	s := w.Settings()
	s.Prices = map[string]Price{"qwen3-8b": {CacheMiss: 0.5}}
	s, err := s.SetFallback([]string{"local", "oa"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
	p, err := w.FallbackPreview(nil, "", 100000)
	if err != nil || len(p) != 2 {
		t.Fatalf("%+v, %v", p, err)
	}
	if p[0].Model != "qwen3-8b" || !p[0].OtherProvider || !p[0].Priced || p[0].Cost != 0.05 || p[0].Problem != "" {
		t.Errorf("local: %+v", p[0])
	}
	if p[1].Model != "gpt-4o-mini" || !p[1].Priced || p[1].Problem != "" { // a known price
		t.Errorf("oa: %+v", p[1])
	}
	for _, bad := range [][]string{{"nope"}, {"local", "local"}, {"local", "oa", "main", "local"}} {
		if _, err := s.SetFallback(bad); err == nil {
			t.Errorf("the chain %q was taken", bad)
		}
	}
	if s, _ = s.RemoveProfile("local"); len(s.Fallback) != 1 || s.Fallback[0] != "oa" {
		t.Errorf("a removed profile stays in the chain: %q", s.Fallback)
	}
}
