package workbench

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/tally-dev/tally/config"
	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
)

// Endpoint profiles and models per role: the types of the front door.
type (
	// Profile is a named endpoint besides the main connection.
	Profile = config.Profile
	// RoleModel is the model one role of the engine's own calls uses.
	RoleModel = config.RoleModel
)

// MainProfile is what SessionOptions.Profile says for the main
// connection when a default profile would otherwise apply.
const MainProfile = config.MainProfile

// The roles of Settings.Roles.
const (
	RoleSubagents = config.RoleSubagents
	RoleSummaries = config.RoleSummaries
	RoleBriefs    = config.RoleBriefs
)

// RoleNamesInOrder lists the roles in the order Settings shows them.
func RoleNamesInOrder() []string { return slices.Clone(config.RoleNames) }

// roleKinds maps the settings' roles to the ledger kinds the engine
// records their calls under.
var roleKinds = map[string]ledger.Kind{
	config.RoleSubagents: ledger.KindSubagent,
	config.RoleSummaries: ledger.KindSummary,
	config.RoleBriefs:    ledger.KindBrief,
}

// sessionProfile is the profile a session is configured on: the one
// asked for (MainProfile for the main connection), else a stored
// session's own, else, for a new session, the settings' default.
func (w *Workbench) sessionProfile(o SessionOptions, saved Settings, stored *SessionInfo) string {
	switch {
	case o.Profile == MainProfile:
		return ""
	case o.Profile != "":
		return o.Profile
	case stored != nil:
		return stored.Profile
	}
	return saved.Profile
}

// choice is the ModelChoice of endpoint r under the settings saved: its
// client with the settings' timeouts, window, prices, cache rule, what
// it can see and whether it takes a prompt cache key. It fails when the
// cache rule saved is not valid or the endpoint is not usable (see
// missing), returning the choice without a client beside the error.
func choice(r Resolved, saved Settings, vision bool) (agent.ModelChoice, error) {
	m := agent.ModelChoice{ModelName: r.Model, Profile: r.Profile, ContextWindow: r.ContextWindow,
		Vision: vision || saved.VisionFor(r.Model), PromptCacheKey: openAIEndpoint(r.BaseURL)}
	if p, ok := saved.PriceFor(r.Model); ok {
		m.HitPrice, m.MissPrice = p.CacheHit, p.CacheMiss
	}
	rule, err := ledger.ParseCacheRule(saved.CacheRule, r.BaseURL)
	if err != nil {
		return m, err
	}
	m.CacheRule = rule
	if err := missing(r); err != nil {
		return m, noModelError{err}
	}
	m.Model = llm.NewOpenAI(saved.Client(r))
	return m, nil
}

// openAIEndpoint reports whether baseURL is OpenAI's own API, the one
// that takes prompt_cache_key.
func openAIEndpoint(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// roles is the Config.Roles of a session on endpoint own: each role the
// settings give a model, on its profile's endpoint or the session's.
func (w *Workbench) roles(saved Settings, own Resolved) (map[ledger.Kind]agent.ModelChoice, error) {
	if len(saved.Roles) == 0 {
		return nil, nil
	}
	out := map[ledger.Kind]agent.ModelChoice{}
	for role, rm := range saved.Roles {
		kind, ok := roleKinds[role]
		if !ok || rm.IsZero() {
			continue
		}
		r := own
		if rm.Profile != "" {
			var err error
			if r, err = config.ResolveProfile(rm.Profile, Flags{}, w.env, saved); err != nil {
				return nil, fmt.Errorf("the %s role: %w", role, err)
			}
		}
		if rm.Model != "" {
			r.Model = rm.Model
		}
		m, err := choice(r, saved, false)
		if err != nil {
			return nil, fmt.Errorf("the %s role's model %s cannot be reached: %w", role, rm, err)
		}
		out[kind] = m
	}
	return out, nil
}

// ModelChoice is the model a running session switches to with
// Session.SwitchModel: model on profile's endpoint ("" for the main
// connection; a model of "" is that endpoint's own). It fails, in one
// sentence, when the profile is not saved or the endpoint cannot be
// reached as configured.
func (w *Workbench) ModelChoice(profile, model string) (agent.ModelChoice, error) {
	saved := w.Settings()
	if profile == MainProfile {
		profile = ""
	}
	r, err := config.ResolveProfile(profile, Flags{Model: model}, w.env, saved)
	if err != nil {
		return agent.ModelChoice{}, err
	}
	m, err := choice(r, saved, false)
	if err != nil {
		return agent.ModelChoice{}, err
	}
	return m, nil
}
