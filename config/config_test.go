package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/storage"
)

func env(m map[string]string) Env { return func(k string) string { return m[k] } }

func TestResolveOrder(t *testing.T) {
	saved := Settings{BaseURL: "http://saved/v1", Model: "saved-model", APIKey: "sk-saved", ContextWindow: 1000}
	r := Resolve(Flags{}, env(nil), saved)
	if r.BaseURL != "http://saved/v1" || r.Model != "saved-model" || r.APIKey != "sk-saved" || r.KeySource != "settings" || r.ContextWindow != 1000 {
		t.Errorf("saved only: %+v", r)
	}
	r = Resolve(Flags{}, env(map[string]string{"OPENAI_BASE_URL": "http://env/v1", "TALLY_MODEL": "env-model", "OPENAI_API_KEY": "sk-env"}), saved)
	if r.BaseURL != "http://env/v1" || r.Model != "env-model" || r.KeySource != "OPENAI_API_KEY" {
		t.Errorf("env over saved: %+v", r)
	}
	r = Resolve(Flags{BaseURL: "http://flag/v1", Model: "flag-model", ContextWindow: 5}, env(map[string]string{"OPENAI_BASE_URL": "http://env/v1"}), saved)
	if r.BaseURL != "http://flag/v1" || r.Model != "flag-model" || r.ContextWindow != 5 {
		t.Errorf("flags over env: %+v", r)
	}
	r = Resolve(Flags{}, env(map[string]string{"DEEPSEEK_API_KEY": "sk-ds"}), Settings{})
	if r.BaseURL != DefaultDeepSeekBaseURL || r.Model != DefaultModel || r.ModelChosen {
		t.Errorf("deepseek key default: %+v", r)
	}
	if r := Resolve(Flags{Model: "m"}, env(nil), Settings{}); !r.ModelChosen {
		t.Errorf("a --model is not marked chosen: %+v", r)
	}
	r = Resolve(Flags{}, env(map[string]string{"OPENAI_API_KEY": "sk-oa"}), Settings{})
	if r.BaseURL != DefaultOpenAIBaseURL || r.Model != DefaultOpenAIModel {
		t.Errorf("openai key default: %+v", r)
	}
	if err := Resolve(Flags{}, env(nil), Settings{}).Check(); err == nil {
		t.Error("nothing configured passed Check")
	}
	if err := (Resolved{BaseURL: "ftp://x"}).Check(); err == nil {
		t.Error("ftp URL passed Check")
	}
}

func TestSaveLoadAndPrices(t *testing.T) {
	st, err := storage.Open(filepath.Join(t.TempDir(), "t.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, err := Load(st); err != nil || s.BaseURL != "" {
		t.Fatalf("empty load = %+v, %v", s, err)
	}
	want := Settings{BaseURL: "http://x/v1", APIKey: "sk-secret-1234", Prices: map[string]Price{"my-model": {CacheHit: 1, CacheMiss: 2, Completion: 3}}}
	if err := Save(st, want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(st)
	if err != nil || got.APIKey != want.APIKey || got.Prices["my-model"].CacheMiss != 2 {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
	if p, ok := got.PriceFor("my-model-large"); !ok || p.Completion != 3 {
		t.Errorf("saved price not used: %+v %v", p, ok)
	}
	if p, ok := got.PriceFor("deepseek-chat"); !ok || p.CacheMiss == 0 {
		t.Errorf("default price missing: %+v", p)
	}
	if _, ok := got.PriceFor("unknown-thing"); ok {
		t.Error("unknown model has a price")
	}
	if m := Mask("sk-secret-1234"); strings.Contains(m, "secret") || !strings.HasSuffix(m, "1234") {
		t.Errorf("Mask leaks: %q", m)
	}
}

func TestCompactionCycleAndWarmUpSettingsRoundTrip(t *testing.T) {
	st, err := storage.Open(filepath.Join(t.TempDir(), "t.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, _ := Load(st); s.Compaction != "" || s.CycleAt != 0 || s.CyclesOff || s.WarmUp {
		t.Fatalf("defaults = %+v; want zero values (auto, 0.75, cycles on, no warm-up)", s)
	}
	want := Settings{Compaction: CompactionAsk, CycleAt: 0.6, CyclesOff: true, WarmUp: true}
	if err := Save(st, want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(st)
	if err != nil || got.Compaction != CompactionAsk || got.CycleAt != 0.6 || !got.CyclesOff || !got.WarmUp {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
}

func TestParseKeepUnder(t *testing.T) {
	for in, want := range map[string]int{"": -1, "auto": -1, " Auto ": -1, "window": 0, "default": 0,
		"64000": 64_000, "64,000": 64_000, "64K": 64_000, "1m": 1_000_000} {
		if got, err := ParseKeepUnder(in); err != nil || got != want {
			t.Errorf("ParseKeepUnder(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"lots", "500", "-64K", "64KB"} {
		if _, err := ParseKeepUnder(bad); err == nil {
			t.Errorf("ParseKeepUnder(%q) accepted it", bad)
		}
	}
}
