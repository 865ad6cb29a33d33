package realmodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/internal/proc"
)

// Tally runs the tally binary as a user would, against one data folder
// and one endpoint.
type Tally struct {
	// Bin is the tally executable; Data its data folder.
	Bin, Data string
	// BaseURL is the OpenAI-compatible endpoint (ending in /v1); Model
	// the model name sent.
	BaseURL, Model string
	// Timeout bounds one command (default 10 minutes); a command that
	// runs longer is killed and reported as a hang.
	Timeout time.Duration
}

// Result is what one tally command did.
type Result struct {
	Args           []string
	Exit           int // exit status; -1 when it was killed for running too long
	Stdout, Stderr string
	Duration       time.Duration
	// Crashed is set when the process died of a signal or a Go panic.
	Crashed bool
	// Hung is set when it ran past the Tally's Timeout and was killed.
	Hung bool
}

// Err is nil for a command that exited 0, and otherwise says how it
// ended, with the last line it wrote on stderr.
func (r Result) Err() error {
	if r.Exit == 0 {
		return nil
	}
	last := strings.TrimSpace(r.Stderr)
	if i := strings.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	switch {
	case r.Hung:
		return fmt.Errorf("tally %s ran longer than its timeout and was killed", r.Args[0])
	case r.Crashed:
		return fmt.Errorf("tally %s crashed (exit %d): %s", r.Args[0], r.Exit, last)
	}
	return fmt.Errorf("tally %s exited %d: %s", r.Args[0], r.Exit, last)
}

// Command runs tally with args (the subcommand first), adding --data,
// and, for the commands that talk to the model, --base-url and --model.
func (t Tally) Command(ctx context.Context, dir string, args ...string) Result {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	full := append([]string{}, args...)
	full = append(full, "--data", t.Data)
	switch args[0] {
	case "run", "compact", "purge":
		full = append(full, "--base-url", t.BaseURL, "--model", t.Model)
	}
	cmd := exec.Command(t.Bin, full...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=local", "TALLY_KEYCHAIN=off", "LANG=en_US.UTF-8")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	proc.StartInGroup(cmd)
	start := time.Now()
	r := Result{Args: args}
	if err := cmd.Start(); err != nil {
		r.Exit, r.Stderr = 127, err.Error()
		return r
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		_ = proc.KillGroup(cmd)
		<-done
		r.Hung = true
	}
	r.Duration = time.Since(start)
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	r.Exit, _ = proc.ExitStatus(cmd.ProcessState)
	if r.Hung {
		r.Exit = -1
	}
	r.Crashed = !r.Hung && (r.Exit > 128 || strings.Contains(r.Stderr, "panic:") || strings.Contains(r.Stderr, "goroutine "))
	return r
}

// Run runs one turn of session in workspace with --json and --yes, plus
// the flags given, and returns the result and the events it printed.
func (t Tally) Run(ctx context.Context, session, workspace, prompt string, flags ...string) (Result, []Event) {
	args := append([]string{"run", "--session", session, "--workspace", workspace, "--yes", "--json"}, flags...)
	args = append(args, prompt)
	r := t.Command(ctx, workspace, args...)
	return r, ParseEvents(r.Stdout)
}

// Event is the part of a `tally run --json` event the checks read.
type Event struct {
	Kind    string `json:"kind"`
	Err     string `json:"error,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message *struct {
		Role    string `json:"role"`
		Kind    string `json:"kind"`
		IsError bool   `json:"is_error"`
		Blocks  []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"blocks"`
	} `json:"message,omitempty"`
	Call *struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"call,omitempty"`
	// Checklist is the whole list after a change (a "checklist" event).
	Checklist []ChecklistItem `json:"checklist,omitempty"`
	Raw       json.RawMessage `json:"-"`
}

// Answer is the text of the assistant messages among events, joined
// by blank lines.
func Answer(events []Event) string {
	var parts []string
	for _, e := range events {
		if e.Kind != "message" || e.Message == nil || e.Message.Role != "assistant" {
			continue
		}
		for _, b := range e.Message.Blocks {
			if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
				parts = append(parts, b.Text)
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// LastChecklist is the checklist of the last "checklist" event, nil
// when there was none.
func LastChecklist(events []Event) []ChecklistItem {
	var out []ChecklistItem
	for _, e := range events {
		if e.Kind == "checklist" {
			out = e.Checklist
		}
	}
	return out
}

// ParseEvents reads the JSON lines of `tally run --json`, skipping any
// line that is not an event.
func ParseEvents(stdout string) []Event {
	var out []Event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Kind != "" {
			e.Raw = append(json.RawMessage(nil), sc.Bytes()...)
			out = append(out, e)
		}
	}
	return out
}

// Ledger is `tally inspect --ledger --json SESSION`.
type Ledger struct {
	Session string        `json:"session"`
	Rows    []ledger.Row  `json:"rows"`
	Totals  ledger.Totals `json:"totals"`
}

// Ledger reads a session's ledger through the command line.
func (t Tally) Ledger(ctx context.Context, session string) (Ledger, error) {
	r := t.Command(ctx, "", "inspect", "--ledger", "--json", session)
	var l Ledger
	if err := r.Err(); err != nil {
		return l, err
	}
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil {
		return l, fmt.Errorf("tally inspect --ledger --json printed no ledger: %w", err)
	}
	return l, nil
}

// ExportLine is one line of `tally export SESSION`.
type ExportLine struct {
	Session string `json:"session"`
	Cycle   int    `json:"cycle"`
	Seq     int    `json:"seq"`
	Message struct {
		Role   string `json:"role"`
		Kind   string `json:"kind"`
		Blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"blocks"`
		ToolCalls []struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
		ToolName   string `json:"tool_name"`
		IsError    bool   `json:"is_error"`
	} `json:"message"`
}

// Text is the message's text blocks joined.
func (l ExportLine) Text() string {
	var parts []string
	for _, b := range l.Message.Blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Export reads a session's whole history through `tally export`.
func (t Tally) Export(ctx context.Context, session string) ([]ExportLine, error) {
	r := t.Command(ctx, "", "export", session)
	if err := r.Err(); err != nil {
		return nil, err
	}
	var out []ExportLine
	sc := bufio.NewScanner(strings.NewReader(r.Stdout))
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		var l ExportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("tally export printed a line that is not JSON: %w", err)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, errors.New("tally export printed nothing")
	}
	return out, nil
}

// Inspect is the part of `tally inspect SESSION` the checks read: the
// next request exactly as it would be sent.
type Inspect struct {
	Window        int             `json:"window"`
	ContextTokens int             `json:"context_tokens"`
	Request       json.RawMessage `json:"request"`
}

// Inspect runs `tally inspect SESSION`, which fails when a status block
// sent does not match its recorded state.
func (t Tally) Inspect(ctx context.Context, session string) (Inspect, error) {
	r := t.Command(ctx, "", "inspect", session)
	var in Inspect
	if err := r.Err(); err != nil {
		return in, err
	}
	if err := json.Unmarshal([]byte(r.Stdout), &in); err != nil {
		return in, fmt.Errorf("tally inspect printed no report: %w", err)
	}
	return in, nil
}
