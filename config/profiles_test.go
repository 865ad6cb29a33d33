package config

import (
	"strings"
	"testing"
)

func TestProfilesResolveOnTheirOwnEndpoint(t *testing.T) {
	s, err := Settings{BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", APIKey: "sk-main"}.
		PutProfile(Profile{Name: "local", BaseURL: "http://127.0.0.1:8080/v1", Model: "qwen3-8b", ContextWindow: 32000})
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.PutProfile(Profile{Name: "oa", BaseURL: "https://api.openai.com/v1", KeyEnv: "MY_OA_KEY"}); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://env/v1", "MY_OA_KEY": "sk-oa"})
	r, err := ResolveProfile("local", Flags{}, e, s)
	if err != nil || r.BaseURL != "http://127.0.0.1:8080/v1" || r.Model != "qwen3-8b" || r.APIKey != "" || r.ContextWindow != 32000 || r.Profile != "local" {
		t.Errorf("local = %+v, %v; want its own endpoint, model and window and no key", r, err)
	}
	r, err = ResolveProfile("oa", Flags{Model: "gpt-4o"}, e, s)
	if err != nil || r.APIKey != "sk-oa" || r.KeySource != "MY_OA_KEY" || r.Model != "gpt-4o" || !r.ModelChosen {
		t.Errorf("oa = %+v, %v; want the key from MY_OA_KEY and the flag's model", r, err)
	}
	if r, _ = ResolveProfile("", Flags{}, e, s); r.BaseURL != "http://env/v1" || r.Profile != "" {
		t.Errorf("the main connection = %+v", r)
	}
	if _, err := ResolveProfile("nope", Flags{}, e, s); !IsNoProfile(err) || !strings.Contains(err.Error(), "tally profile add") {
		t.Errorf("an unknown profile: %v", err)
	}
}

func TestProfileChecksAndRemoval(t *testing.T) {
	for _, p := range []Profile{
		{Name: "Bad Name", BaseURL: "http://x/v1"},
		{Name: "ok", BaseURL: "ftp://x"},
		{Name: "ok", BaseURL: "http://x/v1", KeyEnv: "A B"},
		{Name: "ok", BaseURL: "http://x/v1", ContextWindow: -1},
	} {
		if _, err := (Settings{}).PutProfile(p); err == nil {
			t.Errorf("%+v was accepted", p)
		}
	}
	s, _ := Settings{}.PutProfile(Profile{Name: "cheap", BaseURL: "http://x/v1", APIKey: "sk-1"})
	s, _ = s.PutProfile(Profile{Name: "cheap", BaseURL: "http://y/v1"}) // an edit without a key keeps it
	if p, _ := s.ProfileNamed("cheap"); p.BaseURL != "http://y/v1" || p.APIKey != "sk-1" || len(s.Profiles) != 1 {
		t.Errorf("edited = %+v", s.Profiles)
	}
	s.Profile = "cheap"
	s, err := s.SetRole(RoleSummaries, RoleModel{Profile: "cheap", Model: "small"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetRole("poems", RoleModel{Model: "x"}); err == nil {
		t.Error("an unknown role was accepted")
	}
	if _, err := s.SetRole(RoleBriefs, RoleModel{Profile: "gone"}); err == nil {
		t.Error("a role on a profile that is not saved was accepted")
	}
	s, err = s.RemoveProfile("cheap")
	if err != nil || len(s.Profiles) != 0 || s.Profile != "" || len(s.Roles) != 0 {
		t.Errorf("after removal: %+v, %v; want no profile, default or role left on it", s, err)
	}
	if _, err := s.RemoveProfile("cheap"); err == nil {
		t.Error("removing a missing profile was not an error")
	}
}

func TestProfileKeysLiveInTheKeychain(t *testing.T) {
	const key = "sk-profile-0123456789"
	st, _ := openStore(t)
	kc := &memKeychain{m: map[string]string{}}
	useKeychain(t, kc)
	s, _ := Settings{}.PutProfile(Profile{Name: "ds", BaseURL: "https://api.deepseek.com/v1", APIKey: key})
	if err := Save(st, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rawSettings(t, st), key) || kc.m[profileUser("ds")] != key {
		t.Fatal("the profile's key is in the database, or not in the keychain")
	}
	got, err := Load(st)
	if p, _ := got.ProfileNamed("ds"); err != nil || p.APIKey != key || p.KeyStore != KeyInKeychain {
		t.Fatalf("Load = %+v, %v", got.Profiles, err)
	}
	got, _ = got.RemoveProfile("ds")
	if err := Save(st, got); err != nil || kc.m[profileUser("ds")] != "" {
		t.Errorf("a removed profile's key stayed in the keychain (err %v)", err)
	}
	// Without a keychain the key is kept in the database, labelled.
	useKeychain(t, nil)
	if err := Save(st, s); err != nil {
		t.Fatal(err)
	}
	if got, _ := Load(st); got.Profiles[0].KeyStore != KeyInDatabase || got.Profiles[0].APIKey != key {
		t.Errorf("without a keychain: %+v", got.Profiles)
	}
}

func TestAProfileCannotBeCalledMain(t *testing.T) {
	if _, err := (Settings{}).PutProfile(Profile{Name: MainProfile, BaseURL: "http://x/v1"}); err == nil || !strings.Contains(err.Error(), "names the main connection") {
		t.Errorf("a profile called main: %v", err)
	}
}

// A keychain that does not answer when the settings are loaded leaves the
// keys it holds where they are: saving the settings then neither deletes
// them nor writes anything in their place, and a key that moves to the
// keychain meanwhile never puts the main key into the database.
func TestAKeychainThatDoesNotAnswerLosesNoKey(t *testing.T) {
	const mainKey, profileKey = "sk-main-0123456789", "sk-profile-0123456789"
	st, _ := openStore(t)
	kc := &memKeychain{m: map[string]string{}}
	useKeychain(t, kc)
	s, _ := Settings{APIKey: mainKey}.PutProfile(Profile{Name: "ds", BaseURL: "https://api.deepseek.com/v1", APIKey: profileKey})
	if err := Save(st, s); err != nil {
		t.Fatal(err)
	}
	useKeychain(t, brokenKeychain{})
	got, err := Load(st)
	if err != nil || got.APIKey != "" || got.Profiles[0].APIKey != "" {
		t.Fatalf("Load with a silent keychain = %q / %q, %v", Mask(got.APIKey), Mask(got.Profiles[0].APIKey), err)
	}
	got.Theme = "dark" // an unrelated change is saved
	if err := Save(st, got); err != nil {
		t.Fatal(err)
	}
	useKeychain(t, kc)
	if kc.m[keychainUser] != mainKey || kc.m[profileUser("ds")] != profileKey {
		t.Fatalf("keys lost: main %q, profile %q", Mask(kc.m[keychainUser]), Mask(kc.m[profileUser("ds")]))
	}
	back, _ := Load(st)
	if back.APIKey != mainKey || back.Profiles[0].APIKey != profileKey || back.Theme != "dark" {
		t.Errorf("reloaded: %q / %q / %q", Mask(back.APIKey), Mask(back.Profiles[0].APIKey), back.Theme)
	}
	// A profile key still in the database moves to the keychain; the
	// main key, already there, is not written to the database with it.
	useKeychain(t, nil)
	s2, _ := back.PutProfile(Profile{Name: "local", BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-local-0123456789"})
	s2.Profiles[1].KeyStore = ""
	if err := write(st, keptKeysBlanked2(s2)); err != nil {
		t.Fatal(err)
	}
	useKeychain(t, kc)
	if _, err := Load(st); err != nil {
		t.Fatal(err)
	}
	if raw := rawSettings(t, st); strings.Contains(raw, mainKey) || strings.Contains(raw, "sk-local-0123456789") {
		t.Errorf("a key is in the database after the move: %s", raw)
	}
}

// keptKeysBlanked2 is s as an earlier version wrote it: the main key in
// the keychain (blanked here), the new profile's key in the database.
func keptKeysBlanked2(s Settings) Settings {
	s.APIKey = ""
	s.Profiles = keptKeysBlanked(s.Profiles)
	return s
}

// Keep gives back what Load would, without asking the keychain again.
func TestKeepGivesBackWhatLoadWould(t *testing.T) {
	st, _ := openStore(t)
	kc := &memKeychain{m: map[string]string{}}
	useKeychain(t, kc)
	s, _ := Settings{APIKey: "sk-main-0123456789", Theme: "dark"}.PutProfile(Profile{Name: "ds", BaseURL: "https://api.deepseek.com/v1", APIKey: "sk-p-0123456789"})
	kept, err := Keep(st, s)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(st)
	if err != nil {
		t.Fatal(err)
	}
	if kept.APIKey != loaded.APIKey || kept.KeyStore != loaded.KeyStore || kept.KeyStore != KeyInKeychain ||
		kept.Profiles[0].APIKey != loaded.Profiles[0].APIKey || kept.Profiles[0].KeyStore != loaded.Profiles[0].KeyStore || kept.Theme != "dark" {
		t.Errorf("Keep = %+v\nLoad = %+v", kept, loaded)
	}
}

// TestAKeyGoesOnlyToItsEndpoint is the regression test for a profile's
// (or the settings') key sent to whatever --base-url a run names.
func TestAKeyGoesOnlyToItsEndpoint(t *testing.T) {
	s, err := Settings{BaseURL: "https://api.deepseek.com/v1", APIKey: "sk-main"}.
		PutProfile(Profile{Name: "oa", BaseURL: "https://api.openai.com/v1", APIKey: "sk-oa"})
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.PutProfile(Profile{Name: "ke", BaseURL: "https://api.openai.com/v1", KeyEnv: "MY_KEY"}); err != nil {
		t.Fatal(err)
	}
	none := env(map[string]string{"MY_KEY": "sk-keyenv"})
	for _, c := range []struct {
		profile, url string
		env          Env
		key          string
	}{
		{"oa", "", none, "sk-oa"},
		{"oa", "https://API.openai.com/v1/", none, "sk-oa"},
		{"oa", "https://attacker.example/v1", none, ""},
		{"ke", "http://127.0.0.1:9/v1", none, ""},
		{"oa", "https://attacker.example/v1", env(map[string]string{"OPENAI_API_KEY": "sk-given"}), "sk-given"},
		{"", "", none, "sk-main"},
		{"", "https://attacker.example/v1", none, ""},
		{"", "", env(map[string]string{"OPENAI_BASE_URL": "https://attacker.example/v1"}), ""},
		{"", "https://attacker.example/v1", env(map[string]string{"DEEPSEEK_API_KEY": "sk-ds"}), "sk-ds"},
	} {
		r, err := ResolveProfile(c.profile, Flags{BaseURL: c.url}, c.env, s)
		if err != nil || r.APIKey != c.key {
			t.Errorf("profile %q, --base-url %q: key %q (from %q), %v; want %q", c.profile, c.url, Mask(r.APIKey), r.KeySource, err, Mask(c.key))
		}
	}
}
