package acp

import (
	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/workbench"
)

// effortOption is the session's reasoning effort as a config option of
// the thought_level category: its own level (the roles' stay as Settings
// or `tally run --effort` set them), one of the levels in order.
func (st *session) effortOption() acp.SessionConfigOption {
	current := "default"
	var values acp.SessionConfigSelectOptionsUngrouped
	if wb, err := st.srv.workbench(); err == nil {
		current = wb.Efforts(st.sessionID())[workbench.EffortSession].String()
	}
	for _, e := range workbench.EffortLevels() {
		desc := "How much the model is asked to think before it answers, mapped to what the provider takes."
		if e == workbench.EffortDefault {
			desc = "Sends nothing: the provider's own default."
		}
		values = append(values, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueId(e.String()), Name: e.String(), Description: &desc})
	}
	o := acp.NewSessionConfigOptionSelect(acp.SessionConfigValueId(current), acp.SessionConfigSelectOptions{Ungrouped: &values})
	o.Select.Id, o.Select.Name = configEffort, "Effort"
	o.Select.Description = acp.Ptr("The model's reasoning effort from the next request on; a recorded change that never rewrites the history.")
	o.Select.Category = acp.Ptr(acp.SessionConfigOptionCategoryThoughtLevel)
	return o
}

// setEffort sets the session's own effort to the level named value.
func (st *session) setEffort(value string) error {
	level, err := workbench.ParseEffort(value)
	if err != nil {
		return invalid("%s", sentence(err.Error()))
	}
	wb, err := st.srv.workbench()
	if err != nil {
		return failure(err)
	}
	return st.store("effort "+level.String(), func() error { return wb.SetEffort(st.sessionID(), workbench.EffortSession, level) })
}
