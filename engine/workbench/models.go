package workbench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tally-dev/tally/config"
	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/tokens"
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
// client with the settings' timeouts and the sessions' efforts, window, prices, cache rule, what
// it can see and whether it takes a prompt cache key. It fails when the
// cache rule saved is not valid or the endpoint is not usable (see
// missing), returning the choice without a client beside the error.
func (w *Workbench) choice(r Resolved, saved Settings, vision bool) (agent.ModelChoice, error) {
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
	c := saved.Client(r)
	c.Efforts = w.efforts() // the session's and its roles' effort, looked up per request
	m.Model = llm.NewOpenAI(c)
	if m.ContextWindow == 0 {
		m.ContextWindow = serverWindow(r, saved)
	}
	return m, nil
}

// ServerWindow reads the context window the server of r serves its model
// with, where the server says so itself (llama.cpp's /props, the meta of
// its /v1/models entry, vLLM's max_model_len), with the timeouts of the
// settings s; it returns the window and where it was read.
func ServerWindow(ctx context.Context, s Settings, r Resolved) (int, string, error) {
	return llm.ServerWindow(ctx, s.Client(r), r.Model)
}

// windowProbe bounds the read of a server's window when a session opens.
const windowProbe = 3 * time.Second

// serverWindows holds, per endpoint and model, the window a server said
// (0 when it answered without saying one), for the life of the process.
var serverWindows sync.Map

// serverWindow is the window the server of r says it serves r.Model with,
// for a model Tally does not know and no window configured: a local
// server (llama.cpp, vLLM) tells the one it was started with, which
// Tally's table cannot know. It is 0 when the model is known, the
// endpoint is a hosted API, or the server does not say; a server that
// could not be reached is asked again next time.
func serverWindow(r Resolved, saved Settings) int {
	if _, known := tokens.Window(r.Model); known || r.ContextWindow > 0 {
		return 0
	}
	u, err := url.Parse(r.BaseURL)
	if err != nil || hostedAPI(u.Hostname()) {
		return 0
	}
	key := r.BaseURL + "\x00" + r.Model
	if v, ok := serverWindows.Load(key); ok {
		return v.(int)
	}
	ctx, cancel := context.WithTimeout(context.Background(), windowProbe)
	defer cancel()
	n, _, err := ServerWindow(ctx, saved, r)
	if err != nil && !errors.Is(err, llm.ErrNoWindow) {
		return 0
	}
	serverWindows.Store(key, n)
	return n
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
		m, err := w.choice(r, saved, false)
		if err != nil {
			return nil, fmt.Errorf("the %s role's model %s cannot be reached: %w", role, rm, err)
		}
		out[kind] = m
	}
	return out, nil
}

// ModelChoice is the model a running session switches to with
// Session.SwitchModel: model on profile's endpoint ("" for the main
// connection; a model of "" is that endpoint's own), with the saved
// fallback chain behind it (see Settings.Fallback). It fails, in one
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
	m, err := w.choice(r, saved, false)
	if err != nil {
		return agent.ModelChoice{}, err
	}
	return w.chained(m, r.Profile, saved, nil)
}
