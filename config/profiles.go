package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/internal/frontmatter"
)

// Profile is a named endpoint besides the main connection — DeepSeek's
// API, a local llama.cpp, OpenAI — that a session can be started on or
// switched to, and that a role (see Roles) can use.
type Profile struct {
	// Name is how sessions, roles and `tally run --profile` refer to it:
	// lower-case letters, digits and '-'.
	Name    string `json:"name"`
	BaseURL string `json:"base_url"`
	// Model is the model sessions on the profile talk to unless they
	// chose another one; "" means the main connection's default model.
	Model string `json:"model,omitempty"`
	// APIKey is the profile's key. Like the main key it is kept in the OS
	// keychain where one answers (KeyStore says where) and never appears
	// in an error.
	APIKey   string `json:"api_key,omitempty"`
	KeyStore string `json:"key_store,omitempty"`
	// KeyEnv names an environment variable holding the key instead; it is
	// read when a session starts and never stored.
	KeyEnv string `json:"key_env,omitempty"`
	// ContextWindow overrides the known-model table for this endpoint's
	// models; 0 means the table.
	ContextWindow int `json:"context_window,omitempty"`
	// keyUnread is Settings.keyUnread for the profile's key.
	keyUnread bool
}

// MainProfile is the name that means the main connection wherever a profile
// is named (--profile main, /model @main), so no profile may have it.
const MainProfile = "main"

// Roles are the engine's own calls a cheaper model can take over.
const (
	RoleSubagents = "subagents" // the task tool's sub-agents
	RoleSummaries = "summaries" // compaction summaries
	RoleBriefs    = "briefs"    // the hand-off briefs of new cycles
)

// RoleNames lists the roles in the order Settings shows them.
var RoleNames = []string{RoleSubagents, RoleSummaries, RoleBriefs}

// RoleModel is the model one role uses: Model on Profile's endpoint (""
// for the session's own endpoint). A zero RoleModel means the session's
// own model.
type RoleModel struct {
	Profile string `json:"profile,omitempty"`
	Model   string `json:"model,omitempty"`
}

// IsZero reports whether the role uses the session's own model.
func (m RoleModel) IsZero() bool { return m.Profile == "" && m.Model == "" }

// String names the choice for people: "model", "model on profile", or
// "profile's model".
func (m RoleModel) String() string {
	switch {
	case m.IsZero():
		return "the session's model"
	case m.Profile == "":
		return m.Model
	case m.Model == "":
		return m.Profile + "'s model"
	}
	return m.Model + " on " + m.Profile
}

// ProfileNamed returns the saved profile called name.
func (s Settings) ProfileNamed(name string) (Profile, bool) {
	i := slices.IndexFunc(s.Profiles, func(p Profile) bool { return strings.EqualFold(p.Name, name) })
	if i < 0 {
		return Profile{}, false
	}
	return s.Profiles[i], true
}

// ProfileNames lists the saved profiles' names in their order.
func (s Settings) ProfileNames() []string {
	out := make([]string, len(s.Profiles))
	for i, p := range s.Profiles {
		out[i] = p.Name
	}
	return out
}

// PutProfile returns s with p added, or replacing the profile of the same
// name; s's own slice is not written. It checks p first.
func (s Settings) PutProfile(p Profile) (Settings, error) {
	p.Name = strings.TrimSpace(p.Name)
	p.BaseURL = strings.TrimSpace(p.BaseURL)
	p.Model = strings.TrimSpace(p.Model)
	if err := p.Check(); err != nil {
		return s, err
	}
	out := slices.Clone(s.Profiles)
	if i := slices.IndexFunc(out, func(o Profile) bool { return strings.EqualFold(o.Name, p.Name) }); i >= 0 {
		if p.APIKey == "" && p.KeyEnv == "" && out[i].KeyEnv == "" {
			p.APIKey, p.KeyStore, p.keyUnread = out[i].APIKey, out[i].KeyStore, out[i].keyUnread // an edit that leaves the key alone keeps it
		}
		out[i] = p
	} else {
		out = append(out, p)
	}
	s.Profiles = out
	return s, nil
}

// RemoveProfile returns s without the profile called name, and with the
// default profile and the roles that used it back on the main connection;
// it is an error when there is no such profile.
func (s Settings) RemoveProfile(name string) (Settings, error) {
	i := slices.IndexFunc(s.Profiles, func(p Profile) bool { return strings.EqualFold(p.Name, name) })
	if i < 0 {
		return s, fmt.Errorf("there is no endpoint profile called %q; `tally profile list` shows them", name)
	}
	gone := s.Profiles[i].Name
	s.Profiles = slices.Delete(slices.Clone(s.Profiles), i, i+1)
	if strings.EqualFold(s.Profile, gone) {
		s.Profile = ""
	}
	s.Fallback = slices.DeleteFunc(slices.Clone(s.Fallback), func(n string) bool { return strings.EqualFold(n, gone) })
	if len(s.Roles) > 0 {
		roles := make(map[string]RoleModel, len(s.Roles))
		for k, v := range s.Roles {
			if !strings.EqualFold(v.Profile, gone) {
				roles[k] = v
			}
		}
		s.Roles = roles
	}
	return s, nil
}

// Check says, in one sentence, what is wrong with p.
func (p Profile) Check() error {
	if p.Name == MainProfile {
		return fmt.Errorf("%q names the main connection; choose another name for the profile", p.Name)
	}
	if !frontmatter.IsName(p.Name) {
		return fmt.Errorf("profile name %q is not a name; use lower-case letters, digits and '-', such as deepseek or local-llama", p.Name)
	}
	u, err := url.Parse(p.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("profile %s: base URL %q is not an http(s) URL; use something like http://127.0.0.1:8080/v1", p.Name, p.BaseURL)
	}
	if p.KeyEnv != "" && (strings.ContainsAny(p.KeyEnv, " =$") || strings.TrimSpace(p.KeyEnv) != p.KeyEnv) {
		return fmt.Errorf("profile %s: %q is not an environment variable's name; use one such as DEEPSEEK_API_KEY", p.Name, p.KeyEnv)
	}
	if p.ContextWindow < 0 {
		return fmt.Errorf("profile %s: the context window is negative; use 0 for the known-model table", p.Name)
	}
	return nil
}

// SetRole returns s with role using m (a zero m: the session's own
// model); it checks that the role exists and that m's profile is saved.
func (s Settings) SetRole(role string, m RoleModel) (Settings, error) {
	if !slices.Contains(RoleNames, role) {
		return s, fmt.Errorf("%q is not a role; use one of %s", role, strings.Join(RoleNames, ", "))
	}
	m.Profile, m.Model = strings.TrimSpace(m.Profile), strings.TrimSpace(m.Model)
	if m.Profile != "" {
		p, ok := s.ProfileNamed(m.Profile)
		if !ok {
			return s, fmt.Errorf("the %s role names the profile %q, which is not saved; add it first", role, m.Profile)
		}
		m.Profile = p.Name
	}
	s.Roles = withEntry(s.Roles, role, m, m.IsZero())
	return s, nil
}

// SetFallback returns s with the fallback chain names: the profiles
// (MainProfile for the main connection) a turn goes on with, in order,
// when its endpoint fails for good; none clears it. It checks that each
// is saved, named once, and that there are at most llm.MaxFallbacks.
func (s Settings) SetFallback(names []string) (Settings, error) {
	chain, err := s.FallbackChain(names)
	if err != nil {
		return s, err
	}
	s.Fallback = chain
	return s, nil
}

// FallbackChain checks the chain names against the saved profiles and
// returns it with each profile's saved spelling (see SetFallback).
func (s Settings) FallbackChain(names []string) ([]string, error) {
	if len(names) > llm.MaxFallbacks {
		return nil, fmt.Errorf("a fallback chain holds at most %d profiles, not %d; drop some", llm.MaxFallbacks, len(names))
	}
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if !strings.EqualFold(n, MainProfile) {
			p, ok := s.ProfileNamed(n)
			if !ok {
				return nil, fmt.Errorf("the fallback %q is not a saved profile; add it with `tally profile add` or use main", n)
			}
			n = p.Name
		} else {
			n = MainProfile
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("the fallback %q is named twice; name each profile once", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// errNoProfile is wrapped by ResolveProfile's error for a name that is not
// saved.
var errNoProfile = errors.New("no such endpoint profile")

// ResolveProfile is Resolve for a session on profile name ("" is the
// main connection, exactly Resolve): the profile's base URL, model, key
// and window, each overridden by its flag. The environment's key,
// endpoint and model variables (TALLY_MODEL too) belong to the main
// connection and do not apply, except for the variable the profile
// names in KeyEnv. A base URL flag naming another endpoint gets neither
// the profile's key nor its KeyEnv, only OPENAI_API_KEY or
// DEEPSEEK_API_KEY when set. A name that is not saved is an error.
func ResolveProfile(name string, f Flags, env Env, saved Settings) (Resolved, error) {
	if name == "" {
		return Resolve(f, env, saved), nil
	}
	p, ok := saved.ProfileNamed(name)
	if !ok {
		return Resolved{}, fmt.Errorf("%w: %q is not saved; add it in Settings or with `tally profile add`", errNoProfile, name)
	}
	if env == nil {
		env = defaultEnv
	}
	r := Resolved{Profile: p.Name, BaseURL: first(f.BaseURL, p.BaseURL), ContextWindow: p.ContextWindow}
	switch {
	case !SameEndpoint(r.BaseURL, p.BaseURL):
		// The profile's key belongs to its endpoint: a --base-url
		// elsewhere gets only a key the environment gives for this run.
		r.APIKey, r.KeySource = envKey(env)
	case p.KeyEnv != "":
		r.APIKey, r.KeySource = env(p.KeyEnv), p.KeyEnv
	case p.APIKey != "":
		r.APIKey, r.KeySource = p.APIKey, "profile "+p.Name
	}
	r.Model = first(f.Model, p.Model)
	r.ModelChosen = r.Model != ""
	if r.Model == "" {
		r.Model = first(saved.Model, DefaultModel)
	}
	if f.ContextWindow != 0 {
		r.ContextWindow = f.ContextWindow
	}
	return r, nil
}

// IsNoProfile reports whether err says a profile is not saved.
func IsNoProfile(err error) bool { return errors.Is(err, errNoProfile) }
