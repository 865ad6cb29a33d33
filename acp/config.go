package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/workbench"
)

// The session configuration options Tally offers, by ID.
const (
	// configMode is the permission mode, the same as the session's modes.
	configMode = "mode"
	// configModel is the model the session talks to: a value
	// "PROFILE/MODEL", PROFILE "main" for the main connection.
	configModel = "model"
	// configNetwork is the session's Network switch: whether web_fetch
	// may fetch pages and commands may reach the network.
	configNetwork = "network"
	// configEffort is the session's reasoning effort (its own, not a
	// role's): default, off, low, medium, high or max.
	configEffort = "effort"
)

// mainProfile names the main connection in a model option's value.
const mainProfile = workbench.MainProfile

// configOptions is the session's configuration as ACP config options:
// the permission mode, the model, the reasoning effort and the Network
// switch. The switch is
// a boolean toggle for a client that advertised boolean options and an
// off/on selector otherwise.
func (st *session) configOptions() []acp.SessionConfigOption {
	perm := st.sess.Permissions()
	modes := st.modes()
	var modeValues acp.SessionConfigSelectOptionsUngrouped
	for _, m := range modes.AvailableModes {
		modeValues = append(modeValues, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(m.Id), Name: m.Name, Description: m.Description})
	}
	mode := acp.NewSessionConfigOptionSelect(acp.SessionConfigValueId(perm.Mode()), acp.SessionConfigSelectOptions{Ungrouped: &modeValues})
	mode.Select.Id, mode.Select.Name = configMode, "Mode"
	mode.Select.Description = acp.Ptr("When Tally asks before a tool call: the same as the session's modes.")
	mode.Select.Category = acp.Ptr(acp.SessionConfigOptionCategoryMode)

	current, models := st.modelValues()
	model := acp.NewSessionConfigOptionSelect(acp.SessionConfigValueId(current), acp.SessionConfigSelectOptions{Ungrouped: &models})
	model.Select.Id, model.Select.Name = configModel, "Model"
	model.Select.Description = acp.Ptr("The model this session talks to: the main connection's or an endpoint profile's (Settings, tally profile list).")
	model.Select.Category = acp.Ptr(acp.SessionConfigOptionCategoryModel)

	return []acp.SessionConfigOption{mode, model, st.effortOption(), st.networkOption(perm.AllowNetwork())}
}

// booleanOptions reports whether the client advertised boolean config
// options at initialize.
func (s *Server) booleanOptions() bool { return s.ledger != nil && s.ledger.booleanOptions() }

// networkOption is the Network switch at on.
func (st *session) networkOption(on bool) acp.SessionConfigOption {
	const name = "Network"
	desc := acp.Ptr("Lets web_fetch fetch pages and commands reach the network in this session; off, both are refused.")
	if st.srv.booleanOptions() {
		o := acp.NewSessionConfigOptionBoolean(on)
		o.Boolean.Id, o.Boolean.Name, o.Boolean.Description = configNetwork, name, desc
		return o
	}
	values := acp.SessionConfigSelectOptionsUngrouped{{Value: "off", Name: "Off"}, {Value: "on", Name: "On"}}
	o := acp.NewSessionConfigOptionSelect(acp.SessionConfigValueId(onOff(on)), acp.SessionConfigSelectOptions{Ungrouped: &values})
	o.Select.Id, o.Select.Name, o.Select.Description = configNetwork, name, desc
	return o
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// modelValues is the model option's current value and its choices: the
// session's own model, the main connection's model and each saved
// profile's, each once.
func (st *session) modelValues() (string, acp.SessionConfigSelectOptionsUngrouped) {
	meta := st.sess.Snapshot().Meta
	current := modelValue(meta.Profile, meta.Model)
	var out acp.SessionConfigSelectOptionsUngrouped
	seen := map[string]bool{}
	add := func(profile, model string) {
		v := modelValue(profile, model)
		if model == "" || seen[v] {
			return
		}
		seen[v] = true
		name := model
		if profile != "" && profile != mainProfile {
			name = model + " (profile " + profile + ")"
		}
		out = append(out, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(v), Name: name})
	}
	add(meta.Profile, meta.Model)
	if wb, err := st.srv.workbench(); err == nil {
		main := wb.Resolve(workbench.Flags{}).Model
		add("", main)
		for _, p := range wb.Settings().Profiles {
			add(p.Name, cmpOr(p.Model, main))
		}
	}
	return current, out
}

// modelValue is the option value of model on profile ("" for the main
// connection). Profile names have no "/", model names may.
func modelValue(profile, model string) string {
	if profile == "" {
		profile = mainProfile
	}
	return profile + "/" + model
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// SetSessionConfigOption implements acp.Agent: it sets the mode, the
// model, the effort or the Network switch of an open session and answers with every
// option's value.
func (s *Server) SetSessionConfigOption(_ context.Context, p acp.SetSessionConfigOptionRequest) (_ acp.SetSessionConfigOptionResponse, err error) {
	defer s.guard("SetSessionConfigOption", &err)
	var sid acp.SessionId
	var id, value string
	var boolean, isBool bool
	switch {
	case p.Boolean != nil:
		sid, id, boolean, isBool = p.Boolean.SessionId, string(p.Boolean.ConfigId), p.Boolean.Value, true
	case p.ValueId != nil:
		sid, id, value = p.ValueId.SessionId, string(p.ValueId.ConfigId), string(p.ValueId.Value)
	default:
		return acp.SetSessionConfigOptionResponse{}, invalid("the request names no value; send configId with a value")
	}
	st, err := s.known(sid)
	if err != nil {
		return acp.SetSessionConfigOptionResponse{}, err
	}
	switch id {
	case configMode:
		if isBool {
			return acp.SetSessionConfigOptionResponse{}, invalid("the mode takes one of %s, not a boolean", strings.Join(modeIDs(), ", "))
		}
		if err := st.setMode(value); err != nil {
			return acp.SetSessionConfigOptionResponse{}, err
		}
		st.send(acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: acp.SessionModeId(value)}})
	case configModel:
		if isBool {
			return acp.SetSessionConfigOptionResponse{}, invalid("the model takes a value PROFILE/MODEL from its options, not a boolean")
		}
		if err := st.setModel(value); err != nil {
			return acp.SetSessionConfigOptionResponse{}, err
		}
	case configEffort:
		if isBool {
			return acp.SetSessionConfigOptionResponse{}, invalid("the effort takes one of its levels (default, off, low, medium, high, max), not a boolean")
		}
		if err := st.setEffort(value); err != nil {
			return acp.SetSessionConfigOptionResponse{}, err
		}
	case configNetwork:
		on := boolean
		if !isBool {
			switch value {
			case "on", "true":
				on = true
			case "off", "false":
			default:
				return acp.SetSessionConfigOptionResponse{}, invalid("the Network switch takes on or off, not %q", value)
			}
		}
		if err := st.setNetwork(on); err != nil {
			return acp.SetSessionConfigOptionResponse{}, err
		}
	default:
		return acp.SetSessionConfigOptionResponse{}, invalid("unknown configuration option %q; Tally offers %s, %s, %s and %s", id, configMode, configModel, configEffort, configNetwork)
	}
	return acp.SetSessionConfigOptionResponse{ConfigOptions: st.configOptions()}, nil
}

func invalid(format string, args ...any) error {
	return &acp.RequestError{Code: codeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// SetSessionMode implements acp.Agent: modeId is a Tally permission mode
// (read-only, ask, auto-edit, full-auto). It decides the next tool call
// at once, even inside a running turn.
func (s *Server) SetSessionMode(_ context.Context, p acp.SetSessionModeRequest) (_ acp.SetSessionModeResponse, err error) {
	defer s.guard("SetSessionMode", &err)
	st, err := s.known(p.SessionId)
	if err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	if err := st.setMode(string(p.ModeId)); err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	st.send(st.configUpdate()) // for a client that shows the config options
	return acp.SetSessionModeResponse{}, nil
}

// configUpdate is the session's config options as an update, for a
// change the client did not make through them.
func (st *session) configUpdate() acp.SessionUpdate {
	return acp.SessionUpdate{ConfigOptionUpdate: &acp.SessionConfigOptionUpdate{ConfigOptions: st.configOptions()}}
}

// setMode switches the permission mode. The gate switches at once;
// storing the mode waits for a running turn, which the answer does not.
func (st *session) setMode(id string) error {
	m, err := tool.ParseMode(id)
	if err != nil || id == "" {
		return invalid("unknown mode %q; use one of %s", id, strings.Join(modeIDs(), ", "))
	}
	if m == tool.ModeFullAuto && !st.sess.Permissions().Sandboxed() {
		return failuref("full-auto mode needs the command sandbox, which is not available here; use auto-edit or ask")
	}
	return st.store("mode "+string(m), func() error { return st.sess.Permissions().SetMode(m) })
}

// setNetwork turns the session's Network switch; storing it waits for a
// running turn, which the answer does not.
func (st *session) setNetwork(on bool) error {
	return st.store("Network switch "+onOff(on), func() error { return st.sess.Permissions().SetAllowNetwork(on) })
}

// store runs set, waiting at most modeWait for it; a later failure is
// logged.
func (st *session) store(what string, set func() error) error {
	done := make(chan error, 1)
	go func() { done <- set() }()
	select {
	case err := <-done:
		if err != nil {
			return failure(err)
		}
	case <-time.After(modeWait):
		go func() {
			if err := <-done; err != nil {
				st.srv.logf("session %s: the %s could not be stored: %s", st.id, what, sentence(err.Error()))
			}
		}()
	}
	return nil
}

// modeWait is how long a mode or switch change waits to be stored before
// it answers; the gate has switched by then.
const modeWait = 250 * time.Millisecond

// setModel switches the session to the model of value, PROFILE/MODEL.
func (st *session) setModel(value string) error {
	profile, model, ok := strings.Cut(value, "/")
	if !ok || profile == "" || model == "" {
		return invalid("the model %q is not one of the option's values; pick one of them (PROFILE/MODEL)", value)
	}
	meta := st.sess.Snapshot().Meta
	if value == modelValue(meta.Profile, meta.Model) {
		return nil
	}
	wb, err := st.srv.workbench()
	if err != nil {
		return failure(err)
	}
	m, err := wb.ModelChoice(profile, model)
	if err == nil {
		err = st.sess.SwitchModel(m)
	}
	switch {
	case errors.Is(err, agent.ErrBusy):
		return failuref("a turn is running in session %s; choose the model again once it ends", st.id)
	case err != nil:
		return failuref("the model stays %s: %s", meta.Model, sentence(err.Error()))
	}
	st.mu.Lock()
	st.noModel = nil // the session now has an endpoint of its own
	st.mu.Unlock()
	go st.sendUsage() // the new model's window
	return nil
}
