package cli

import (
	"encoding/json"
	"io"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/prompt"
)

// inspectReport is what `tally inspect` prints.
type inspectReport struct {
	Session       string             `json:"session"`
	Model         string             `json:"model"`
	Window        int                `json:"window"`
	ContextTokens int                `json:"context_tokens"`
	Exact         bool               `json:"exact"`
	Level         float64            `json:"level"` // ContextTokens / Window
	Fingerprint   prompt.Fingerprint `json:"fingerprint"`
	Request       llm.Request        `json:"request"`
}

func cmdInspect(args []string, stdout, stderr io.Writer) error {
	o, err := parse("inspect", args, stderr)
	if err != nil {
		return err
	}
	id, err := needSession("inspect", o)
	if err != nil {
		return err
	}
	st, err := o.openStore()
	if err != nil {
		return err
	}
	defer st.Close()
	r, _, err := o.resolve(st)
	if err != nil {
		return err
	}
	cfg := agent.Config{Store: st, ContextWindow: r.ContextWindow}
	if o.model != "" || r.Model != "" {
		cfg.ModelName = o.model
	}
	sess, err := agent.Inspect(cfg, id)
	if err != nil {
		return err
	}
	level, exact := sess.ContextTokens()
	rep := inspectReport{
		Session: id, Model: sess.ModelName(), Window: sess.Window(),
		ContextTokens: level, Exact: exact, Fingerprint: sess.Fingerprint(), Request: sess.NextRequest(),
	}
	if rep.Window > 0 {
		rep.Level = float64(level) / float64(rep.Window)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}
