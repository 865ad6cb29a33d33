package workbench

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/tally-dev/tally/config"
	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/llm"
)

// chained returns own, the model of a session on profile ("" for the
// main connection), with its client wrapped in an llm.Chain over the
// fallback profiles names (the saved chain when names is nil): a turn
// whose endpoint fails for good goes on with the next of them. Each
// fallback gets a client of its own, resolved from its profile alone, so
// its key goes only to its own base URL and the session's flags never
// reach it. The session's own profile is skipped. A fallback named
// explicitly that cannot be used is an error; one of the saved chain is
// left out (FallbackPreview says why).
func (w *Workbench) chained(own agent.ModelChoice, profile string, saved Settings, names []string) (agent.ModelChoice, error) {
	explicit := names != nil
	if names == nil {
		names = saved.Fallback
	}
	chain, err := saved.FallbackChain(names)
	if err != nil || len(chain) == 0 || own.Model == nil {
		return own, err
	}
	var links []llm.Link
	for _, n := range chain {
		m, err := w.fallbackChoice(n, saved)
		switch {
		case profileName(n) == profile:
			continue // the session's own endpoint is no fallback
		case err != nil && explicit:
			return own, err
		case err != nil:
			continue
		}
		links = append(links, llm.Link{Model: m.Model, Name: m.ModelName, Label: linkLabel(m.ModelName, n), CacheKey: m.PromptCacheKey})
	}
	if len(links) == 0 {
		return own, nil
	}
	first := llm.Link{Model: own.Model, Name: own.ModelName, Label: linkLabel(own.ModelName, profile)}
	c, err := llm.NewChain(first, links...)
	if err != nil {
		return own, err
	}
	own.Model = c
	return own, nil
}

// fallbackChoice is the model of fallback profile n (MainProfile for the
// main connection), resolved from the saved settings alone.
func (w *Workbench) fallbackChoice(n string, saved Settings) (agent.ModelChoice, error) {
	r, err := config.ResolveProfile(profileName(n), Flags{}, w.env, saved)
	if err != nil {
		return agent.ModelChoice{}, fmt.Errorf("the fallback %s: %w", n, err)
	}
	m, err := w.choice(r, saved, false)
	if err != nil {
		return m, fmt.Errorf("the fallback %s cannot be reached as configured: %w", n, err)
	}
	return m, nil
}

// profileName is the profile of a chain's name: "" for MainProfile.
func profileName(n string) string {
	if n == MainProfile {
		return ""
	}
	return n
}

// linkLabel names a chain's link for people and the ledger: "model
// (profile)", or the model alone on the main connection.
func linkLabel(model, profile string) string {
	if profile == "" || profile == MainProfile {
		return model
	}
	return model + " (" + profile + ")"
}

// FallbackStep is one fallback of a chain's preview: where it goes, and
// what the switch to it costs. Any fallback starts a new cache prefix
// (another provider's cache, or another model's, starts empty), so the
// whole context is re-sent at the fallback's miss price.
type FallbackStep struct {
	// Profile is the fallback's profile (main for the main connection),
	// Model the model it talks to, Host its endpoint's host.
	Profile string `json:"profile"`
	Model   string `json:"model"`
	Host    string `json:"host"`
	// OtherProvider says the fallback is on another host than the
	// session's endpoint.
	OtherProvider bool `json:"other_provider"`
	// MissPrice is the fallback model's price of uncached input (USD per
	// million tokens); Priced is false when none is saved.
	MissPrice float64 `json:"miss_price"`
	Priced    bool    `json:"priced"`
	// Tokens is the context re-sent, and Cost what that costs at
	// MissPrice.
	Tokens int     `json:"tokens"`
	Cost   float64 `json:"cost_usd"`
	// Problem says why the fallback cannot be used now ("" when it can).
	Problem string `json:"problem,omitempty"`
}

// FallbackPreview is the preview of the fallback chain names (the saved
// one when nil) of a session on profile ("" for the main connection)
// whose context holds tokens tokens: each fallback, the provider it is
// on, and what re-sending the context there at its miss price costs. An
// invalid chain is an error.
func (w *Workbench) FallbackPreview(names []string, profile string, tokens int) ([]FallbackStep, error) {
	return w.FallbackPreviewWith(w.Settings(), names, profile, tokens)
}

// FallbackPreviewWith is FallbackPreview under the settings saved instead
// of the stored ones (for a settings form showing values not yet saved).
func (w *Workbench) FallbackPreviewWith(saved Settings, names []string, profile string, tokens int) ([]FallbackStep, error) {
	if names == nil {
		names = saved.Fallback
	}
	chain, err := saved.FallbackChain(names)
	if err != nil {
		return nil, err
	}
	ownHost := ""
	if r, err := config.ResolveProfile(profile, Flags{}, w.env, saved); err == nil {
		ownHost = hostOf(r.BaseURL)
	}
	var out []FallbackStep
	for _, n := range chain {
		if profileName(n) == profile {
			continue
		}
		st := FallbackStep{Profile: n, Tokens: tokens}
		r, err := config.ResolveProfile(profileName(n), Flags{}, w.env, saved)
		if err == nil {
			st.Model, st.Host = r.Model, hostOf(r.BaseURL)
			st.OtherProvider = !strings.EqualFold(st.Host, ownHost)
			if p, ok := saved.PriceFor(r.Model); ok {
				st.MissPrice, st.Priced = p.CacheMiss, true
				st.Cost = float64(tokens) * p.CacheMiss / 1e6
			}
			err = missing(r)
		}
		if err != nil {
			st.Problem = err.Error()
		}
		out = append(out, st)
	}
	return out, nil
}

// hostOf is the host of a base URL, "" when it has none.
func hostOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return u.Host
}
