package workbench

import (
	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/llm"
)

// demoModel returns the scripted demo model, one per workbench, so its
// simulated prompt cache spans the workbench's demo sessions as a
// server's would.
func (w *Workbench) demoModel() llm.Model {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.demo == nil {
		w.demo = demo.NewModel(demo.Pace)
	}
	return w.demo
}

// IsDemo reports whether a stored session runs on the demo model.
func IsDemo(s SessionInfo) bool { return s.Model == demo.ModelName }
