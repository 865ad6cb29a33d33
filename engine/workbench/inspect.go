package workbench

import (
	"errors"

	"github.com/tally-dev/tally/engine/agent"
)

// InspectConfig is the configuration for reading stored session o.ID as
// it stands, for agent.Inspect: Config's mapping, except that the
// session's own model (and so its window, unless one is given) is shown
// unless o.Flags.Model names another, whatever the environment or the
// settings choose. It needs no model endpoint: a missing one is not an
// error here, and any other error of Config is returned with no
// configuration.
func (w *Workbench) InspectConfig(o SessionOptions) (agent.Config, error) {
	cfg, err := w.Config(o)
	if err != nil && !errors.Is(err, ErrNoModel) {
		return agent.Config{}, err
	}
	// agent.Inspect takes the stored session's model when none is named.
	cfg.ModelName = o.Flags.Model
	return cfg, nil
}
