// Package guard stops an agent from looping within one turn.
//
// A [Guard] watches the tool calls of a turn. It blocks the [BlockAt]th and
// every later call of the same tool with the same arguments (compared after
// [Canonical] normalisation, so key order and whitespace do not matter but
// a different offset does), warns after [WarnAt] consecutive failures of a
// tool and stops the turn after [HaltAt]. Its messages are meant for the
// model: each names the tool, says what happened and suggests a change of
// approach. [Guard.Alerts] summarises the active conditions for the
// model-facing status bar.
//
// All counters belong to one turn; call [Guard.Reset] when a new turn
// starts.
package guard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Thresholds of the guard.
const (
	// BlockAt is the ordinal of the first identical call in a turn that is
	// not executed: the first two run, the third and later are blocked.
	BlockAt = 3
	// WarnAt is the number of consecutive failures of one tool after which
	// each further failure carries a warning.
	WarnAt = 3
	// HaltAt is the number of consecutive failures of one tool that ends
	// the turn.
	HaltAt = 8
)

// Canonical returns the canonical form of a JSON arguments string: object
// keys sorted at every level, no insignificant whitespace, strings
// re-encoded (so "\u0041" and "A" are the same) and numbers kept exactly as
// written (so 1 and 1.0 stay different). Array order is kept. An empty
// string or null stands for no arguments and gives "{}". When an object
// repeats a key, the last value wins, as in encoding/json. Text that is not
// exactly one JSON value is an error.
func Canonical(args string) (string, error) {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" || trimmed == "null" {
		return "{}", nil
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", errors.New("arguments have extra text after the JSON value")
	}
	var b bytes.Buffer
	if err := writeCanonical(&b, v); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeCanonical(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		b.WriteString(v.String())
	case string:
		writeString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := writeCanonical(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("unexpected JSON value of type %T", v)
	}
	return nil
}

// writeString writes s as a JSON string without HTML escaping.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // drop the newline Encode adds
}

// Key identifies a call for duplicate detection: the hex SHA-256 of the tool
// name, a NUL byte and the canonical arguments, or the raw arguments when
// they are not valid JSON. Calls with equal keys are treated as identical.
func Key(tool, args string) string {
	canon, err := Canonical(args)
	if err != nil {
		canon = args
	}
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write([]byte(canon))
	return hex.EncodeToString(h.Sum(nil))
}

// Verdict is the guard's decision about one call, from [Guard.Check].
type Verdict struct {
	// Blocked means the call must not be executed; send Message to the
	// model as its result instead.
	Blocked bool
	// Count is how many times this exact call has been attempted in the
	// turn, including this one.
	Count int
	// Message is the tool result to send when Blocked, and "" otherwise.
	Message string
}

// Outcome is the guard's reaction to a finished call, from [Guard.Record].
type Outcome struct {
	// Consecutive is the tool's current run of failures; 0 after a success.
	Consecutive int
	// Warn means the run of failures reached [WarnAt] but not [HaltAt];
	// append Message to the tool result.
	Warn bool
	// Halt means the run of failures reached [HaltAt]; end the turn and
	// show Message to the user.
	Halt bool
	// Message is the warning or halt text, and "" when neither applies.
	Message string
}

// Guard tracks the tool calls of one turn. The zero value is ready to use,
// and all methods are safe for concurrent use.
type Guard struct {
	mu       sync.Mutex
	calls    map[string]int // call key -> attempts this turn
	blocked  map[string]int // tool -> highest attempt count that was blocked
	failures map[string]int // tool -> consecutive failures
}

// New returns a guard for a fresh turn.
func New() *Guard { return &Guard{} }

// Reset starts a new turn: it forgets identical-call counts, blocked calls
// and consecutive-failure runs, so a tool that kept failing in the previous
// turn starts again from zero.
func (g *Guard) Reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls, g.blocked, g.failures = nil, nil, nil
}

// Check counts a call of tool with the given raw JSON arguments and decides
// whether it may run. The first [BlockAt]-1 identical calls in a turn run;
// the [BlockAt]th and every later one are blocked, and blocked attempts
// still count. A blocked call should not be passed to [Guard.Record].
func (g *Guard) Check(tool, args string) Verdict {
	key := Key(tool, args)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calls == nil {
		g.calls = make(map[string]int)
	}
	g.calls[key]++
	n := g.calls[key]
	if n < BlockAt {
		return Verdict{Count: n}
	}
	if g.blocked == nil {
		g.blocked = make(map[string]int)
	}
	g.blocked[tool] = max(g.blocked[tool], n)
	return Verdict{
		Blocked: true,
		Count:   n,
		Message: fmt.Sprintf("not executed: this is the %s call of %s with these exact arguments in this turn, and repeating it will not give a different result; change approach: use different arguments, try a different tool, or ask the user how to proceed.",
			ordinal(n), display(tool)),
	}
}

// Record notes whether a call of tool that ran has failed. A success resets
// the tool's run of failures; each tool has its own run. The [WarnAt]th to
// ([HaltAt]-1)th consecutive failure returns a warning to append to the
// tool result; the [HaltAt]th and later ones ask to end the turn.
func (g *Guard) Record(tool string, failed bool) Outcome {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !failed {
		delete(g.failures, tool)
		return Outcome{}
	}
	if g.failures == nil {
		g.failures = make(map[string]int)
	}
	g.failures[tool]++
	n := g.failures[tool]
	name := display(tool)
	switch {
	case n >= HaltAt:
		return Outcome{Consecutive: n, Halt: true, Message: fmt.Sprintf(
			"Turn stopped: %s failed %d times in a row, so the agent was stopped before it could keep looping; read the last errors, then adjust the request or the setup and send a new message.",
			name, n)}
	case n >= WarnAt:
		return Outcome{Consecutive: n, Warn: true, Message: fmt.Sprintf(
			"warning: %s has failed %d times in a row; read the errors, then change approach (different arguments, a different tool, or ask the user) — after %d failures in a row the turn stops.",
			name, n, HaltAt)}
	default:
		return Outcome{Consecutive: n}
	}
}

// Alerts returns one short line per active condition of the turn, sorted,
// for the model-facing status bar: a tool whose repeated calls were blocked
// ("loop_guard: blocked repeated read_file call (3x)") and a tool with at
// least [WarnAt] consecutive failures ("failures: run_shell failed 3 times
// in a row"). The lines contain no timestamps, so equal states give equal
// lines. It never returns nil.
func (g *Guard) Alerts() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := []string{}
	for tool, n := range g.blocked {
		out = append(out, fmt.Sprintf("loop_guard: blocked repeated %s call (%dx)", display(tool), n))
	}
	for tool, n := range g.failures {
		if n >= WarnAt {
			out = append(out, fmt.Sprintf("failures: %s failed %d times in a row", display(tool), n))
		}
	}
	slices.Sort(out)
	return out
}

// display returns tool as shown in messages: as is when it looks like a
// tool name, otherwise quoted and shortened so messages stay on one line.
func display(tool string) string {
	if len(tool) > 0 && len(tool) <= 64 && strings.IndexFunc(tool, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || r == ':' || r == '/' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) < 0 {
		return tool
	}
	r := []rune(tool)
	if len(r) > 64 {
		return strconv.Quote(string(r[:64])) + "…"
	}
	return strconv.Quote(tool)
}

// ordinal returns n as "1st", "2nd", "3rd", "4th", "11th", "21st", ...
func ordinal(n int) string {
	suffix := "th"
	switch n % 10 {
	case 1:
		suffix = "st"
	case 2:
		suffix = "nd"
	case 3:
		suffix = "rd"
	}
	if n%100 >= 11 && n%100 <= 13 {
		suffix = "th"
	}
	return strconv.Itoa(n) + suffix
}
