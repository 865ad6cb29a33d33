package workbench

import (
	"errors"
	"strings"
	"testing"

	"github.com/tally-dev/tally/config"
	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/ledger"
)

// profiled is a workbench whose settings have a main connection on
// DeepSeek and two profiles: a local server and OpenAI.
func profiled(t *testing.T) *Workbench {
	t.Helper()
	w := bench(t, map[string]string{"OA_KEY": "sk-oa"})
	s := Settings{BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", APIKey: "sk-main"}
	s, err := s.PutProfile(Profile{Name: "local", BaseURL: "http://127.0.0.1:8080/v1", Model: "qwen3-8b", ContextWindow: 32000})
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.PutProfile(Profile{Name: "oa", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", KeyEnv: "OA_KEY"}); err != nil {
		t.Fatal(err)
	}
	if err := w.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestSessionsStartOnTheirProfileAndKeepIt(t *testing.T) {
	w := profiled(t)
	cfg, err := w.Config(SessionOptions{Profile: "local"})
	if err != nil || cfg.Profile != "local" || cfg.ModelName != "qwen3-8b" || cfg.ContextWindow != 32000 || cfg.PromptCacheKey {
		t.Fatalf("local: profile %q model %q window %d key %v, %v", cfg.Profile, cfg.ModelName, cfg.ContextWindow, cfg.PromptCacheKey, err)
	}
	cfg.UserConfigDir = ""
	s, err := agent.Create(cfg, "on-local", t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Reopened without naming one, the session finds its profile again.
	if cfg, err = w.Config(SessionOptions{ID: "on-local"}); err != nil || cfg.Profile != "local" || cfg.ModelName != "qwen3-8b" {
		t.Errorf("reopened: profile %q model %q, %v", cfg.Profile, cfg.ModelName, err)
	}
	// OpenAI's endpoint gets the prompt cache key; the default profile
	// applies to new sessions only, and "main" asks for the main one.
	s2 := w.Settings()
	s2.Profile = "oa"
	if err := w.SaveSettings(s2); err != nil {
		t.Fatal(err)
	}
	if cfg, err = w.Config(SessionOptions{}); err != nil || cfg.Profile != "oa" || !cfg.PromptCacheKey || cfg.ModelName != "gpt-4o-mini" {
		t.Errorf("the default profile: %q %q key %v, %v", cfg.Profile, cfg.ModelName, cfg.PromptCacheKey, err)
	}
	if cfg, err = w.Config(SessionOptions{ID: "on-local"}); err != nil || cfg.Profile != "local" {
		t.Errorf("a stored session moved to the default profile: %q, %v", cfg.Profile, err)
	}
	if cfg, err = w.Config(SessionOptions{Profile: MainProfile}); err != nil || cfg.Profile != "" || cfg.ModelName != "deepseek-chat" {
		t.Errorf("main: %q %q, %v", cfg.Profile, cfg.ModelName, err)
	}
	if _, err := w.Config(SessionOptions{Profile: "nope"}); !config.IsNoProfile(err) {
		t.Errorf("an unknown profile: %v", err)
	}
}

func TestASwitchedModelOutlivesTheSettingsModel(t *testing.T) {
	w := profiled(t)
	cfg, err := w.Config(SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserConfigDir = ""
	s, err := agent.Create(cfg, "sw", t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.ModelChoice("local", "")
	if err != nil || m.ModelName != "qwen3-8b" || m.Model == nil {
		t.Fatalf("ModelChoice = %+v, %v", m, err)
	}
	if err := s.SwitchModel(m); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if cfg, err = w.Config(SessionOptions{ID: "sw"}); err != nil || cfg.Profile != "local" || cfg.ModelName != "qwen3-8b" {
		t.Errorf("reopened after the switch: %q %q, %v", cfg.Profile, cfg.ModelName, err)
	}
	if _, err := w.ModelChoice("nope", ""); err == nil {
		t.Error("a switch to an unknown profile was not an error")
	}
}

func TestRolesGetTheirOwnClients(t *testing.T) {
	w := profiled(t)
	s := w.Settings()
	s, err := s.SetRole(RoleSubagents, RoleModel{Profile: "local"})
	if err == nil {
		s, err = s.SetRole(RoleSummaries, RoleModel{Model: "deepseek-v4-flash"})
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
	cfg, err := w.Config(SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sub, sum := cfg.Roles[ledger.KindSubagent], cfg.Roles[ledger.KindSummary]
	if sub.ModelName != "qwen3-8b" || sub.Profile != "local" || sub.Model == nil || sum.ModelName != "deepseek-v4-flash" || sum.Profile != "" || sum.HitPrice != 0.02 {
		t.Errorf("roles = %+v", cfg.Roles)
	}
	if _, ok := cfg.Roles[ledger.KindBrief]; ok {
		t.Error("a role not set got a model")
	}
	// A role on an endpoint that needs a key it lacks says which role.
	s, _ = s.PutProfile(Profile{Name: "ds2", BaseURL: "https://api.deepseek.com/v1"})
	s, _ = s.SetRole(RoleBriefs, RoleModel{Profile: "ds2"})
	if err := w.SaveSettings(s); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Config(SessionOptions{}); err == nil || !strings.Contains(err.Error(), "briefs role") {
		t.Errorf("a role without its key: %v", err)
	}
}

func TestASessionWhoseProfileWasRemovedStillOpens(t *testing.T) {
	w := profiled(t)
	cfg, err := w.Config(SessionOptions{Profile: "local"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserConfigDir = ""
	s, err := agent.Create(cfg, "orphan", t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	saved, _ := w.Settings().RemoveProfile("local")
	if err := w.SaveSettings(saved); err != nil {
		t.Fatal(err)
	}
	cfg, err = w.Config(SessionOptions{ID: "orphan"})
	if !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), `profile "local", which is no longer saved`) || cfg.ModelName != "qwen3-8b" {
		t.Fatalf("Config = %q, %v; want the session readable, with what to do", cfg.ModelName, err)
	}
	r, err := w.OpenSession(cfg, "orphan")
	if err != nil {
		t.Fatalf("the session does not open to be read: %v", err)
	}
	r.Close()
	// Switching it to the main connection makes it usable again.
	m, err := w.ModelChoice(MainProfile, "")
	if err != nil {
		t.Fatal(err)
	}
	r, _ = w.OpenSession(cfg, "orphan")
	if err := r.SwitchModel(m); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if cfg, err = w.Config(SessionOptions{ID: "orphan"}); err != nil || cfg.Profile != "" || cfg.Model == nil {
		t.Errorf("after the switch: %q, %v", cfg.Profile, err)
	}
}
