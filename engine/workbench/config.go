package workbench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/tally-dev/tally/config"
	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/ownpaths"
)

// SessionOptions are what a host adds to the saved settings when it
// configures a session: command-line overrides and its own callbacks.
// Zero values mean "from the settings" (or the engine's default).
type SessionOptions struct {
	// ID is the stored session the configuration is for ("" for a new
	// one). A stored session keeps the model it was made with unless a
	// model is chosen explicitly (flag, TALLY_MODEL or Settings).
	ID string
	// Flags override the endpoint, model and window.
	Flags Flags
	// Compaction overrides the saved compaction mode ("auto", "ask",
	// "off"); CycleAt, when set, overrides the saved cycle threshold (0
	// turns cycles off).
	Compaction string
	CycleAt    *float64
	// KeepUnder, when not "", overrides the saved level the context is
	// kept under (see ParseKeepUnder).
	KeepUnder string
	// Mode overrides the permission mode; "" keeps a stored session's own
	// and starts a new one in the mode chosen in Settings.
	Mode tool.Mode
	// AllowCommands and DenyCommands are command rules for this session
	// only (agent.Config.AllowCommands), on top of the workspace's.
	AllowCommands, DenyCommands []string
	// Roots are the session's additional folders (agent.Config.Roots):
	// nil keeps a stored session's own.
	Roots []string
	// Demo configures the scripted demo model instead of the endpoint.
	Demo bool
	// MaxSteps, StatusMode, NoChecklist and the callbacks are passed
	// through.
	MaxSteps    int
	StatusMode  status.Placement
	NoChecklist bool
	Approver    tool.Approver
	Asker       rewrite.Asker
	OnEvent     func(agent.Event)
	// Forms says the host answers the MCP servers' forms (see
	// agent.Config.Forms); false declines them.
	Forms bool
	// Vision takes the model to accept images whatever the settings and
	// the known-model table say (tally run --vision).
	Vision bool
	// Editor is the editor the session is driven from (see
	// agent.Config.Editor); nil for none.
	Editor tool.Editor
	// PrepareSnapshots takes the workspace's checkpoint snapshot in the
	// background when a turn starts (agent.Config.PrepareSnapshots); the
	// app, the command line and the editor's agent all set it.
	PrepareSnapshots bool
	// Fallback, when not nil, is the fallback chain of this session
	// instead of the saved one (Settings.Fallback): the profiles, main
	// for the main connection, a turn goes on with when its endpoint
	// fails for good. An empty, non-nil list turns fallback off.
	Fallback []string
	// Profile is the endpoint profile to use: "" keeps a stored session's
	// own and starts a new one on the settings' default, MainProfile is
	// the main connection.
	Profile string
}

// ErrNoModel is matched (errors.Is) by the error Config returns beside a
// usable configuration when no model endpoint is set up: sessions can be
// opened and read, but turns cannot run until one is configured.
var ErrNoModel = errors.New("no model endpoint is configured")

// noModelError keeps what is missing, in one sentence.
type noModelError struct{ why error }

func (e noModelError) Error() string        { return e.why.Error() }
func (e noModelError) Is(target error) bool { return target == ErrNoModel }

// Config is the one mapping from saved settings, flags and the
// environment to a session's engine configuration, used by the app and the
// command line alike: model and window (a stored session keeps its model
// unless one is chosen), prices, compaction mode, cycle threshold,
// permission mode, the command policy, the model client with its timeouts,
// and the user's AGENTS.md folder. When no endpoint is configured the
// configuration has no Model and the error matches ErrNoModel; an invalid
// override is an error of its own and no configuration.
func (w *Workbench) Config(o SessionOptions) (agent.Config, error) {
	saved := w.Settings()
	cfg := agent.Config{
		Store: w.store, MaxSteps: o.MaxSteps, StatusMode: o.StatusMode, NoChecklist: o.NoChecklist,
		Approver: o.Approver, Asker: o.Asker, OnEvent: o.OnEvent, Forms: o.Forms,
		UserConfigDir: userConfigDir(),
		Shell:         agent.ShellConfig(saved.Shell),
		Mode:          w.permissionMode(o, saved),
		AllowCommands: o.AllowCommands, DenyCommands: o.DenyCommands, Roots: o.Roots,
		// The one mapping of the checkpoint cap (0: the default).
		CheckpointBytes:  saved.CheckpointCap,
		LSP:              languageServers(),
		Editor:           o.Editor,
		PrepareSnapshots: o.PrepareSnapshots,
	}
	if cfg.Approver == nil {
		cfg.Approver = tool.DenyAll{}
	}
	mode := o.Compaction
	if mode == "" {
		mode = saved.Compaction
	}
	cm, err := rewrite.ParseMode(mode)
	if err != nil {
		return agent.Config{}, err
	}
	cfg.Compaction = cm
	cfg.CycleAt = cycleAt(saved, o.CycleAt)
	keep := o.KeepUnder
	if keep == "" {
		keep = saved.KeepUnder
	}
	if cfg.KeepUnder, err = ParseKeepUnder(keep); err != nil {
		return agent.Config{}, err
	}
	// The stored session's header, when there is one: its model, its
	// endpoint profile, whether it chose its model itself.
	var stored *SessionInfo
	if o.ID != "" {
		if meta, err := w.store.Session(o.ID); err == nil {
			stored = &meta
		}
	}
	profile := w.sessionProfile(o, saved, stored)
	r, err := config.ResolveProfile(profile, o.Flags, w.env, saved) // resolved once: the endpoint decides the cache rule and the client
	if err != nil && stored != nil && o.Profile == "" {
		// The session's own profile was removed since: it still opens, to
		// be read, and says how to go on.
		cfg.ModelName, cfg.Profile = stored.Model, stored.Profile
		if cfg.CacheRule, cfg.StatusMode, err = placement(o.StatusMode, saved, ""); err != nil {
			return agent.Config{}, err
		}
		return cfg, noModelError{fmt.Errorf("this session talks to the endpoint profile %q, which is no longer saved; add it again in Settings, or switch the session with /model @main", stored.Profile)}
	}
	if err != nil {
		return agent.Config{}, err
	}
	// A stored session keeps its own model unless one is chosen (a model
	// it switched to itself gives way only to a flag or TALLY_MODEL, and
	// none survives a move to another endpoint); the demo session keeps
	// the demo model and its window, for the app and the command line
	// alike.
	isDemo := o.Demo
	if stored != nil && stored.Model != "" && stored.Profile == r.Profile {
		explicit := o.Flags.Model != "" || (r.Profile == "" && w.env("TALLY_MODEL") != "")
		if !r.ModelChosen || (stored.OwnModel && !explicit) {
			r.Model = stored.Model
		}
		isDemo = isDemo || IsDemo(*stored)
	}
	base := r.BaseURL
	if isDemo {
		base = ""
	}
	if cfg.CacheRule, cfg.StatusMode, err = placement(o.StatusMode, saved, base); err != nil {
		return agent.Config{}, err
	}
	if isDemo {
		cfg.ModelName, cfg.ContextWindow = demo.ModelName, demo.ContextWindow
		cfg.Model = w.demoModel()
		cfg.MCP.Off = true   // the demo runs no network and no one else's servers
		cfg.LSP.Off = true   // and tells the same story on every machine
		cfg.Hooks.Off = true // nor the user's hooks, whose scripts expect their own projects
		return cfg, nil
	}
	own, err := w.choice(r, saved, o.Vision)
	own.CacheRule = cfg.CacheRule // the rule placement chose (the saved override or the endpoint's)
	cfg.ModelChoice = own
	if err != nil {
		return cfg, err
	}
	if cfg.ModelChoice, err = w.chained(own, r.Profile, saved, o.Fallback); err != nil {
		return cfg, err
	}
	if cfg.Roles, err = w.roles(saved, r); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// languageServers is the sessions' language-server configuration: the
// defaults with the user's lsp.json over them. A file that cannot be read
// leaves the defaults (`tally lsp status` says what is wrong with it).
func languageServers() agent.LSPConfig {
	path, err := lsp.UserPath()
	if err != nil {
		return agent.LSPConfig{}
	}
	servers, err := lsp.LoadConfig(path)
	if err != nil {
		return agent.LSPConfig{}
	}
	return agent.LSPConfig{Servers: servers}
}

// placement is the provider's cache rule (the saved override, or the
// endpoint's) and the status placement: the override given, else the saved
// one, else the placement measured cheapest under that rule; baseURL is
// the endpoint ("" for the demo).
func placement(mode status.Placement, saved Settings, baseURL string) (ledger.CacheRule, status.Placement, error) {
	rule, err := ledger.ParseCacheRule(saved.CacheRule, baseURL)
	if err != nil {
		return "", "", err
	}
	if mode == "" {
		mode = status.Placement(saved.StatusPlacement)
	}
	switch mode {
	case "":
		mode = status.DefaultPlacement(rule == ledger.RuleUnits)
	case status.Tail, status.Append, status.OnChange, status.Off:
	default:
		return "", "", fmt.Errorf("status placement %q is not tail, append, on-change or off", mode)
	}
	return rule, mode, nil
}

// missing says, in one sentence, what is missing for r to reach a model:
// the endpoint, or the API key of a hosted API that needs one.
func missing(r Resolved) error {
	if err := r.Check(); err != nil {
		return err
	}
	if u, err := url.Parse(r.BaseURL); err == nil && r.APIKey == "" && hostedAPI(u.Hostname()) {
		return fmt.Errorf("API key missing for %s; paste it in Settings (the gear)", u.Hostname())
	}
	return nil
}

// hostedAPI reports whether host is a provider's API that always needs a
// key (local servers such as vLLM, llama.cpp or Ollama usually do not).
func hostedAPI(host string) bool {
	for _, h := range []string{"api.openai.com", "api.deepseek.com", "openrouter.ai", "api.anthropic.com", "api.mistral.ai", "api.groq.com", "api.together.xyz"} {
		if host == h || strings.HasSuffix(host, "."+h) {
			return true
		}
	}
	return false
}

// MissingKey reports whether err says an API key is missing (the app then
// opens Settings on the key field).
func MissingKey(err error) bool {
	return err != nil && strings.Contains(err.Error(), "API key missing")
}

// permissionMode is the override when given; otherwise a stored session
// keeps its own mode and a new one starts in the mode chosen in Settings.
func (w *Workbench) permissionMode(o SessionOptions, saved Settings) tool.Mode {
	if o.Mode != "" {
		return o.Mode
	}
	if o.ID != "" {
		if _, err := w.store.Session(o.ID); err == nil {
			return ""
		}
	}
	return tool.Mode(saved.Mode)
}

// cycleAt maps the cycle settings to agent.Config.CycleAt: 0 is the
// engine default, a negative value turns cycles off. An override of 0
// turns cycles off too.
func cycleAt(s Settings, override *float64) float64 {
	switch {
	case override != nil && *override == 0:
		return -1
	case override != nil:
		return *override
	case s.CyclesOff:
		return -1
	case s.CycleAt > 0 && s.CycleAt <= 1:
		return s.CycleAt
	}
	return 0
}

// userConfigDir is where the user's own AGENTS.md lives.
func userConfigDir() string {
	d, err := ownpaths.ConfigDir()
	if err != nil {
		return ""
	}
	return d
}

// Ping checks that the endpoint r answers for model, with the timeouts of
// the settings s, and returns how long it took.
func Ping(ctx context.Context, s Settings, r Resolved) (time.Duration, error) {
	return llm.Ping(ctx, s.Client(r), r.Model)
}
