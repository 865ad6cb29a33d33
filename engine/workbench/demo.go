package workbench

import (
	"sync"

	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// demoServer is the scripted demo model, served on loopback once per
// workbench.
type demoServer struct {
	once sync.Once
	srv  *llmtest.Server
}

func (d *demoServer) url() string {
	d.once.Do(func() { d.srv = llmtest.New(demo.Script()) })
	return d.srv.URL()
}

func (d *demoServer) close() {
	if d.srv != nil {
		d.srv.Close()
	}
}

// demoModel returns a client of the scripted demo model, starting it on
// first use.
func (w *Workbench) demoModel() llm.Model {
	w.mu.Lock()
	if w.demo == nil {
		w.demo = &demoServer{}
	}
	d := w.demo
	w.mu.Unlock()
	return llm.NewOpenAI(llm.Config{BaseURL: d.url(), APIKey: "demo"})
}

// IsDemo reports whether a stored session runs on the demo model.
func IsDemo(s SessionInfo) bool { return s.Model == demo.ModelName }
