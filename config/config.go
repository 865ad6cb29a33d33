// Package config resolves where Tally talks to a model: the base URL, the
// model name, the API key, the context window and per-model prices. Values
// come from command-line flags, then the environment, then the settings
// saved in the store, then defaults. The API key is kept in the OS keychain
// where one answers (else in the local store, readable only by the user),
// is sent only to the endpoint it was saved for, and is never part of any
// error message.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/storage"
)

// Defaults used when nothing else is configured.
const (
	DefaultOpenAIBaseURL   = "https://api.openai.com/v1"
	DefaultDeepSeekBaseURL = "https://api.deepseek.com/v1"
	DefaultModel           = "deepseek-chat"
	DefaultOpenAIModel     = "gpt-4o-mini"
)

// settingKey is the store setting that holds the saved Settings.
const settingKey = "config"

// Settings are the values a person edits on the settings page.
type Settings struct {
	BaseURL string `json:"base_url,omitempty"`
	Model   string `json:"model,omitempty"`
	APIKey  string `json:"api_key,omitempty"`
	// KeyStore says where APIKey is kept: KeyInKeychain (then it is never
	// written to the database) or KeyInDatabase, the labelled fallback.
	KeyStore      string           `json:"key_store,omitempty"`
	ContextWindow int              `json:"context_window,omitempty"`
	Prices        map[string]Price `json:"prices,omitempty"`
	LastSession   string           `json:"last_session,omitempty"`
	Theme         string           `json:"theme,omitempty"` // "", "light" or "dark"
	// TextScale is the size of the app's text against the theme's, 1 for
	// 100 % (0 means 1); Ctrl+= and Ctrl+- change it, Ctrl+0 resets it.
	TextScale float64 `json:"text_scale,omitempty"`
	// EnterNewline makes Enter add a line in the prompt box, leaving
	// Ctrl+Enter to send; by default Enter sends and Shift+Enter adds a
	// line.
	EnterNewline bool `json:"enter_newline,omitempty"`
	// Compaction is when the history is compacted: "auto" (or "") when the
	// level reaches the threshold, "ask" to show the preview and wait for
	// the user, "off" to never compact on its own. Compaction rewrites the
	// history once, so the next request misses the cache.
	Compaction string `json:"compaction,omitempty"`
	// CycleAt is the share of the context window at which a new cycle
	// starts (0 means the default, 0.75). A cycle resets the conversation
	// to a hand-off brief: the next request is a full cache miss.
	CycleAt float64 `json:"cycle_at,omitempty"`
	// CyclesOff disables cycles altogether; CycleAt is then ignored.
	CyclesOff bool `json:"cycles_off,omitempty"`
	// KeepUnder is the level the context is kept under: "" or
	// KeepUnderAuto for the level that costs least at the model's prices,
	// KeepUnderWindow for the window's default threshold, or a number of
	// tokens (see ParseKeepUnder).
	KeepUnder string `json:"keep_under,omitempty"`
	// WarmUp sends the stable prompt prefix once when a session is created,
	// so the first real request is billed at the cache-hit price.
	WarmUp bool `json:"warm_up,omitempty"`
	// Shell is what commands are allowed beyond the built-in policy.
	Shell ShellSettings `json:"shell,omitzero"`
	// Mode is the permission mode new sessions start in ("" means ask).
	Mode string `json:"mode,omitempty"`
	// Timeouts of the model client in seconds; 0 means the default (see
	// llm.Config), a negative value turns one off.
	ConnectTimeout   float64 `json:"connect_timeout,omitempty"`
	FirstByteTimeout float64 `json:"first_byte_timeout,omitempty"`
	IdleTimeout      float64 `json:"idle_timeout,omitempty"`
	// StatusPlacement overrides where the status block goes ("tail",
	// "append", "on-change"); "" picks the provider's default.
	StatusPlacement string `json:"status_placement,omitempty"`
	// CacheRule overrides the provider's cache rule the cost estimates
	// assume ("blocks", "units"); "" picks it from the endpoint.
	CacheRule string `json:"cache_rule,omitempty"`
	// NoNotifications turns off the desktop notifications sent when a turn
	// ends or waits for the user while its session is not in view.
	NoNotifications bool `json:"no_notifications,omitempty"`
	// NoMemoryOnLeave turns off the memory proposal the app asks of a
	// session in the background when the user leaves it after three turns
	// or more; proposing on request still works.
	NoMemoryOnLeave bool `json:"no_memory_on_leave,omitempty"`
	// Window is the main window's last size and position, restored on
	// launch; zero means the default.
	Window WindowPlace `json:"window,omitzero"`
	// CheckpointCap is the compressed size in bytes the file checkpoints
	// of one workspace may keep before the oldest checkpoints of closed
	// sessions are dropped; 0 means the default, 1 GB
	// (checkpoint.DefaultStoreBytes).
	CheckpointCap int64 `json:"checkpoint_cap,omitempty"`
	// Vision says, per model (its name in lower case, as in Model),
	// whether it accepts images; a model not listed follows the
	// known-model table (see VisionFor). It is the Settings checkbox "The
	// model accepts images".
	Vision map[string]bool `json:"vision,omitempty"`
	// Profiles are the named endpoints besides the main connection (see
	// Profile); Profile is the one new sessions start on ("" for the main
	// connection).
	Profiles []Profile `json:"profiles,omitempty"`
	Profile  string    `json:"profile,omitempty"`
	// Roles give the engine's own calls a model of their own, by role
	// (RoleSubagents, RoleSummaries, RoleBriefs); a role not listed uses
	// the session's model.
	Roles map[string]RoleModel `json:"roles,omitempty"`
	// Fallback names the profiles ("main" for the main connection) a
	// turn goes on with, in order, when its endpoint fails for good; at
	// most three (see SetFallback).
	Fallback []string `json:"fallback,omitempty"`
	// keyUnread says the keychain holds APIKey but did not answer when
	// the settings were loaded: saving leaves the entry as it is.
	keyUnread bool
}

// WindowPlace is a window's size (and, where the platform reports it,
// position) in device-independent pixels.
type WindowPlace struct {
	Width  float32 `json:"width,omitempty"`
	Height float32 `json:"height,omitempty"`
}

// Client is the model client configuration for r with these settings'
// timeouts: the one mapping the app and the CLI use.
func (s Settings) Client(r Resolved) llm.Config {
	secs := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	return llm.Config{BaseURL: r.BaseURL, APIKey: r.APIKey,
		ConnectTimeout: secs(s.ConnectTimeout), FirstByteTimeout: secs(s.FirstByteTimeout), StreamIdleTimeout: secs(s.IdleTimeout)}
}

// ShellSettings are the user's additions to the command policy. Its fields
// match agent.ShellConfig, so one is converted to the other directly.
type ShellSettings struct {
	// Env names extra environment variables commands receive; names that
	// look like secrets never pass.
	Env []string `json:"env,omitempty"`
	// CacheDirs are the build caches commands may write inside the
	// sandbox; nil means the detected defaults (Go, npm, pip, Cargo).
	CacheDirs []string `json:"cache_dirs,omitempty"`
	// SecretFiles is the secret-file deny list; nil means the default.
	SecretFiles []string `json:"secret_files,omitempty"`
	// FetchLocal lets web_fetch reach loopback and link-local addresses
	// (a documentation server on this machine); off, they are refused,
	// redirects included.
	FetchLocal bool `json:"fetch_local,omitempty"`
}

// Compaction modes of Settings.Compaction.
const (
	CompactionAuto = "auto"
	CompactionAsk  = "ask"
	CompactionOff  = "off"
)

// Choices of Settings.KeepUnder besides a number of tokens.
const (
	KeepUnderAuto   = "auto"
	KeepUnderWindow = "window"
)

// ParseKeepUnder reads a KeepUnder choice: 0 for the window's default,
// -1 for auto ("" too), or a level in tokens, written 64000, 64,000 or
// 64K, of at least 8K.
func ParseKeepUnder(v string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(v))
	switch t {
	case "", KeepUnderAuto:
		return -1, nil
	case KeepUnderWindow, "default":
		return 0, nil
	}
	mult := 1
	switch {
	case strings.HasSuffix(t, "k"):
		t, mult = strings.TrimSuffix(t, "k"), 1_000
	case strings.HasSuffix(t, "m"):
		t, mult = strings.TrimSuffix(t, "m"), 1_000_000
	}
	n, err := strconv.Atoi(strings.ReplaceAll(t, ",", ""))
	if err != nil || n*mult < 8_000 {
		return 0, fmt.Errorf("keep the context under %q is not auto, window or a number of tokens of at least 8K", v)
	}
	return n * mult, nil
}

// Price is a model's price in US dollars per million tokens.
type Price = ledger.Price

// DefaultPrices are list prices per million tokens (USD) for common models;
// the settings page can override any of them.
var DefaultPrices = map[string]Price{
	"deepseek-chat":     {CacheHit: 0.028, CacheMiss: 0.28, Completion: 0.42},
	"deepseek-reasoner": {CacheHit: 0.028, CacheMiss: 0.28, Completion: 0.42},
	"deepseek-v4-flash": {CacheHit: 0.02, CacheMiss: 0.20, Completion: 0.60},
	"deepseek-v4-pro":   {CacheHit: 0.05, CacheMiss: 0.50, Completion: 1.50},
	"gpt-4o":            {CacheHit: 1.25, CacheMiss: 2.50, Completion: 10.00},
	"gpt-4o-mini":       {CacheHit: 0.075, CacheMiss: 0.15, Completion: 0.60},
	"gpt-4.1":           {CacheHit: 0.50, CacheMiss: 2.00, Completion: 8.00},
	"gpt-5":             {CacheHit: 0.125, CacheMiss: 1.25, Completion: 10.00},
}

// PriceFor returns the price of model from the saved table or the defaults,
// matching the longest prefix, and whether one was found.
func (s Settings) PriceFor(model string) (Price, bool) {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, table := range []map[string]Price{s.Prices, DefaultPrices} {
		best, found := "", false
		var p Price
		for k, v := range table {
			if strings.HasPrefix(m, strings.ToLower(k)) && len(k) >= len(best) {
				best, p, found = k, v, true
			}
		}
		if found {
			return p, true
		}
	}
	return Price{}, false
}

// VisionFor reports whether model accepts images: the choice saved for
// it in Vision (its name in lower case), else the known-model table
// (tokens.Vision, which takes a model it does not know not to).
func (s Settings) VisionFor(model string) bool {
	if v, ok := s.Vision[VisionKey(model)]; ok {
		return v
	}
	return tokens.Vision(model)
}

// SetVision returns s with the choice for model saved in Vision, or
// removed when it is what the known-model table says anyway; s's own map
// is not written.
func (s Settings) SetVision(model string, on bool) Settings {
	key := VisionKey(model)
	if key == "" {
		return s
	}
	s.Vision = withEntry(s.Vision, key, on, on == tokens.Vision(model))
	return s
}

// withEntry returns a copy of m with k set to v, or without k when drop;
// nil when nothing is left. m itself is not written.
func withEntry[K comparable, V any](m map[K]V, k K, v V, drop bool) map[K]V {
	out := make(map[K]V, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	if drop {
		delete(out, k)
	} else {
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// VisionKey is the key of model in Settings.Vision: its name, trimmed, in
// lower case.
func VisionKey(model string) string { return strings.ToLower(strings.TrimSpace(model)) }

// Load reads the saved settings; a store without them gives zero Settings.
// The API key is read from the OS keychain when it is kept there; a key
// still kept in the database moves into the keychain when one answers.
func Load(st *storage.Store) (Settings, error) {
	s, err := read(st)
	if err != nil {
		return s, err
	}
	mainMoved, profilesMoved := loadKey(&s), loadProfileKeys(&s)
	if mainMoved || profilesMoved {
		moved := s
		if moved.KeyStore == KeyInKeychain {
			moved.APIKey = "" // in the keychain, moved now or before
		}
		moved.Profiles = keptKeysBlanked(s.Profiles)
		if werr := write(st, moved); werr != nil && mainMoved {
			s.KeyStore = KeyInDatabase // still there; moved next time
		}
	}
	return s, nil
}

// read reads the saved settings as stored, keys from the keychain not
// filled in.
func read(st *storage.Store) (Settings, error) {
	var s Settings
	err := st.View(func(tx *storage.Tx) error {
		data, err := tx.Setting(settingKey)
		if err != nil || data == nil {
			return err
		}
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("saved settings are unreadable (%w); open Settings and save them again", err)
		}
		return nil
	})
	return s, err
}

// keptKeysBlanked returns profiles with the keys the keychain keeps
// blanked, as they are written to the database.
func keptKeysBlanked(profiles []Profile) []Profile {
	out := slices.Clone(profiles)
	for i := range out {
		if out[i].KeyStore == KeyInKeychain {
			out[i].APIKey = ""
		}
	}
	return out
}

// Save stores s, replacing the saved settings; the API keys (the main
// one and the profiles') go to the OS keychain when one answers and to
// the database otherwise, and the keychain entries of removed profiles
// are deleted.
func Save(st *storage.Store, s Settings) error {
	_, err := Keep(st, s)
	return err
}

// Keep is Save returning the settings as they now are: s's keys, each
// labelled with where it is kept, as Load would give them back without
// asking the keychain again.
func Keep(st *storage.Store, s Settings) (Settings, error) {
	before, _ := read(st)
	written := storeKey(s)
	written.Profiles = storeProfileKeys(s.Profiles, before.Profiles)
	if err := write(st, written); err != nil {
		return s, err
	}
	kept := s
	kept.KeyStore = written.KeyStore
	kept.Profiles = slices.Clone(s.Profiles)
	for i := range kept.Profiles {
		kept.Profiles[i].KeyStore = written.Profiles[i].KeyStore
		if kept.Profiles[i].KeyEnv != "" {
			kept.Profiles[i].APIKey = "" // read from its variable, never kept
		}
	}
	return kept, nil
}

func write(st *storage.Store, s Settings) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return st.Update(func(tx *storage.Tx) error { return tx.PutSetting(settingKey, data) })
}

// Env is the environment lookup, replaceable in tests.
type Env func(string) string

// defaultEnv is the process's environment.
var defaultEnv Env = os.Getenv

// Resolved is the endpoint a session will use.
type Resolved struct {
	// Profile is the endpoint profile it came from ("" for the main
	// connection).
	Profile       string
	BaseURL       string
	Model         string
	APIKey        string
	ContextWindow int
	// KeySource says where the key came from ("flag", "OPENAI_API_KEY",
	// "DEEPSEEK_API_KEY", "settings" or ""), never the key itself.
	KeySource string
	// ModelChosen is false when Model is only the default for the
	// endpoint; a stored session then keeps the model it was made with.
	ModelChosen bool
}

// Flags are the command-line overrides; empty fields are unset.
type Flags struct {
	BaseURL       string
	Model         string
	ContextWindow int
}

// Resolve merges flags, the environment and saved settings.
func Resolve(f Flags, env Env, saved Settings) Resolved {
	if env == nil {
		env = defaultEnv
	}
	r := Resolved{BaseURL: first(f.BaseURL, env("OPENAI_BASE_URL"), saved.BaseURL)}
	r.APIKey, r.KeySource = envKey(env)
	if r.KeySource == "" && saved.APIKey != "" && SameEndpoint(r.BaseURL, saved.BaseURL) {
		// A saved key belongs to the saved endpoint: another URL, from a
		// flag or OPENAI_BASE_URL, gets no key unless one is given for it.
		r.APIKey, r.KeySource = saved.APIKey, "settings"
	}
	if r.BaseURL == "" {
		if r.KeySource == "DEEPSEEK_API_KEY" {
			r.BaseURL = DefaultDeepSeekBaseURL
		} else if r.APIKey != "" {
			r.BaseURL = DefaultOpenAIBaseURL
		}
	}
	r.Model = first(f.Model, env("TALLY_MODEL"), saved.Model)
	r.ModelChosen = r.Model != ""
	if r.Model == "" {
		r.Model = DefaultModel
		if strings.Contains(r.BaseURL, "api.openai.com") {
			r.Model = DefaultOpenAIModel
		}
	}
	r.ContextWindow = f.ContextWindow
	if r.ContextWindow == 0 {
		r.ContextWindow = saved.ContextWindow
	}
	return r
}

// envKey returns the key the environment gives and the variable it is in:
// OPENAI_API_KEY, else DEEPSEEK_API_KEY; "" when neither is set.
func envKey(env Env) (key, source string) {
	for _, v := range []string{"OPENAI_API_KEY", "DEEPSEEK_API_KEY"} {
		if k := env(v); k != "" {
			return k, v
		}
	}
	return "", ""
}

// SameEndpoint reports whether the base URLs a and b name one endpoint:
// equal but for surrounding spaces, a trailing slash and the case of the
// scheme and host. A key saved for one is sent only to the other.
func SameEndpoint(a, b string) bool {
	norm := func(s string) string {
		s = strings.TrimRight(strings.TrimSpace(s), "/")
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
			return u.String()
		}
		return s
	}
	return norm(a) == norm(b)
}

// Check reports, in one sentence, what is missing for r to reach a model.
func (r Resolved) Check() error {
	if r.BaseURL == "" {
		return errors.New("no model endpoint is configured; pass --base-url (or set OPENAI_BASE_URL) and set OPENAI_API_KEY")
	}
	u, err := url.Parse(r.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base URL %q is not an http(s) URL; use something like https://api.deepseek.com/v1", r.BaseURL)
	}
	return nil
}

// Mask renders a secret for display: its last four characters at most.
func Mask(key string) string {
	if key == "" {
		return "(not set)"
	}
	if len(key) <= 8 {
		return "••••"
	}
	return "••••" + key[len(key)-4:]
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
