package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tally-dev/tally/internal/text"
)

// Exit statuses of every command; `tally run` uses them all, the other
// commands ExitOK, ExitFail and ExitUsage. When several apply to one run,
// the first of ExitFail, ExitBudget, ExitSchema, ExitDenied wins.
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitFail: the command or the turn failed: the model's endpoint
	// refused or never answered, the turn was interrupted, a file could
	// not be read.
	ExitFail = 1
	// ExitUsage: bad flags or arguments.
	ExitUsage = 2
	// ExitDenied: the turn ended, but a tool call that needed approval
	// was denied (no terminal to ask on and no --yes, or answered no).
	ExitDenied = 3
	// ExitBudget: the turn stopped at its step limit (--max-steps).
	ExitBudget = 4
	// ExitSchema: the final answer was not JSON valid against
	// --json-schema, even after one retry.
	ExitSchema = 5
)

// EventsVersion is the version of the --json event stream, the "v" of
// every line; it changes only when a field changes meaning or goes away.
const EventsVersion = 1

// exitError is an error that ends a command with a status of its own.
type exitError struct {
	error
	code int
}

func (e exitError) Unwrap() error { return e.error }

// withExit gives err the exit status code (nil stays nil).
func withExit(err error, code int) error {
	if err == nil {
		return nil
	}
	return exitError{err, code}
}

// exitCode is the exit status err ends a command with.
func exitCode(err error) int {
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &ee):
		return ee.code
	}
	return ExitFail
}

// answerSchema is the JSON Schema of --json-schema: the final answer must
// be a JSON value it accepts.
type answerSchema struct {
	path     string
	text     string // the schema as given, compacted, for the prompt
	resolved *jsonschema.Resolved
}

// loadSchema reads and resolves the JSON Schema in path.
func loadSchema(path string) (*answerSchema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("tally run: the --json-schema file cannot be read (%s); give the path of a JSON Schema file", message(err))
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, usagef("tally run: %s is not a JSON Schema (%s); fix the file", path, message(err))
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, usagef("tally run: the JSON Schema %s cannot be used (%s); fix the file", path, message(err))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return nil, usagef("tally run: %s is not JSON (%s); fix the file", path, message(err))
	}
	return &answerSchema{path: path, text: compact.String(), resolved: rs}, nil
}

// prompt is the user's prompt with the schema the answer must follow.
func (a *answerSchema) prompt(userText string) string {
	return userText + "\n\nWhen you are done, your final answer must be only one JSON value, with no other text and no code fence, " +
		"that validates against this JSON Schema:\n" + a.text
}

// retryPrompt asks again after the answer failed validation.
func (a *answerSchema) retryPrompt(problem error) string {
	return "Your final answer does not validate against the JSON Schema: " + text.OneLine(problem.Error(), 600) +
		". Answer again with only the corrected JSON value, no other text and no code fence."
}

// check returns the answer's JSON, compacted, when it validates.
func (a *answerSchema) check(answer string) (json.RawMessage, error) {
	s := strings.TrimSpace(answer)
	if strings.HasPrefix(s, "```") { // a fenced block despite the prompt
		s = strings.TrimPrefix(s, "```")
		if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.ContainsAny(s[:nl], "{[\"") {
			s = s[nl+1:]
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
	}
	if s == "" {
		return nil, errors.New("the answer is empty")
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the answer is not JSON (%v)", err)
	}
	if dec.More() {
		return nil, errors.New("the answer holds more than one JSON value")
	}
	if err := a.resolved.Validate(v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, []byte(s)); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// denials counts the calls an approver denied.
type denials struct{ n atomic.Int32 }

func (d *denials) add() {
	if d != nil {
		d.n.Add(1)
	}
}

func (d *denials) count() int {
	if d == nil {
		return 0
	}
	return int(d.n.Load())
}

// result is the last line of the --json stream of `tally run`: how the
// run ended.
type result struct {
	V       int             `json:"v"`
	Kind    string          `json:"kind"` // "result"
	Session string          `json:"session,omitempty"`
	Time    time.Time       `json:"time"`
	Exit    int             `json:"exit"`
	Reason  string          `json:"reason,omitempty"`
	Error   string          `json:"error,omitempty"`
	Answer  string          `json:"answer,omitempty"`
	JSON    json.RawMessage `json:"json,omitempty"`
	Denied  int             `json:"denied,omitempty"`
}

// writeResult writes r as one JSON line.
func writeResult(w io.Writer, r result) {
	r.V, r.Kind, r.Time = EventsVersion, "result", time.Now().UTC()
	if b, err := json.Marshal(r); err == nil {
		w.Write(append(safeJSON(b), '\n'))
	}
}

// versioned puts "v" first into the JSON object b of an event.
func versioned(b []byte) []byte {
	if len(b) < 2 || b[0] != '{' {
		return b
	}
	head := fmt.Sprintf(`{"v":%d`, EventsVersion)
	if b[1] != '}' {
		head += ","
	}
	return append([]byte(head), b[1:]...)
}
