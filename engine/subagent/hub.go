// Package subagent is the task tool: the model delegates a self-contained job to
// a child agent (a sub-agent) with its own system prompt, context, tool
// set and step budget. Only the child's capped report, inside an envelope
// saying how much work it did, enters the parent's log; the child's whole
// transcript is stored under the parent session (see store.go)
// and its requests are ledger rows of kind subagent. The child runs the
// same step loop as the parent's turn (package step), in child.go.
package subagent

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/storage"
)

// TaskToolName is the name of the tool that starts a sub-agent.
const TaskToolName = "task"

// The kinds of sub-agent. Each kind has its own fixed system prompt and
// tool catalog, so the children of one kind share a cached prefix.
const (
	// Explore reads and searches only (the default).
	Explore = "explore"
	// General may also edit files and run commands, through the
	// parent's permission mode and approvals.
	General = "general"
)

// Defaults of Config.
const (
	DefaultParallel     = 3
	DefaultSteps        = 25
	DefaultReportTokens = 4_000
)

// Config sets the limits of the task tool. The zero value gives
// the defaults.
type Config struct {
	// Off leaves the task tool out of the catalog.
	Off bool
	// Parallel bounds the children running at once (DefaultParallel
	// when 0); the task calls of one reply beyond it wait for a free slot.
	Parallel int
	// MaxSteps is each child's budget of model requests
	// (DefaultSteps when 0).
	MaxSteps int
	// ReportTokens caps the report handed to the parent
	// (DefaultReportTokens when 0); the stored transcript keeps it whole.
	ReportTokens int
}

func (c Config) parallel() int { return positiveOr(c.Parallel, DefaultParallel) }
func (c Config) maxSteps() int { return positiveOr(c.MaxSteps, DefaultSteps) }
func (c Config) reportCap() int {
	return positiveOr(c.ReportTokens, DefaultReportTokens)
}

func positiveOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// The statuses of a sub-agent: Running while it works, then how it
// ended (step.ReasonDone, step.ReasonStepLimit, step.ReasonCancelled, step.ReasonFailed), or
// Interrupted when Tally stopped while it ran.
const (
	Running     = "running"
	Interrupted = "interrupted"
)

// Info describes one sub-agent: what it was asked, how far it got and
// what it cost. Values are copies the caller may keep.
type Info struct {
	ID     string `json:"id"`      // "sub-1", "sub-2", … in the order they started
	CallID string `json:"call_id"` // the parent's task call it answers
	Title  string `json:"title"`   // the task's description
	Kind   string `json:"kind"`    // Explore or General
	Status string `json:"status"`  // Running, a Reason constant or Interrupted
	// Cycle is the parent's cycle when the child started.
	Cycle    int `json:"cycle"`
	Steps    int `json:"steps"`     // model requests made
	MaxSteps int `json:"max_steps"` // its step budget
	// PromptTokens and CompletionTokens add up its requests' usage;
	// ContextTokens is the prompt size of its last request.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	ContextTokens    int `json:"context_tokens"`
	FilesRead        int `json:"files_read"` // distinct files read
	Messages         int `json:"messages"`   // stored transcript length
	// Compactions counts the times the child's context was compacted to
	// stay inside its window (see relieve).
	Compactions int `json:"compactions,omitempty"`
	// Checklist is the child's own checklist.
	Checklist []todo.Item `json:"checklist,omitempty"`
	// ReportTokens is the size of the report the parent got; ReportSHA
	// names the whole report in the blob store (retrieve_tool_result).
	ReportTokens int    `json:"report_tokens,omitempty"`
	ReportSHA    string `json:"report_sha,omitempty"`
	// ReportHead is the report's first line, for lists and reminders.
	ReportHead string    `json:"report_head,omitempty"`
	Error      string    `json:"error,omitempty"`
	Started    time.Time `json:"started"`
	Ended      time.Time `json:"ended,omitzero"`
}

// Tokens is everything the child's requests billed.
func (c Info) Tokens() int { return c.PromptTokens + c.CompletionTokens }

// TaskParams are the arguments of the task tool.
type TaskParams struct {
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	Kind        string `json:"kind,omitempty"`
}

//go:embed task.md
var taskDoc string

var taskSpec = tool.Spec{
	Name:        TaskToolName,
	Description: strings.TrimSpace(taskDoc),
	Parameters: json.RawMessage(`{"type":"object","properties":{` +
		`"description":{"type":"string","description":"A short title for the job (3-8 words), shown to the user."},` +
		`"prompt":{"type":"string","description":"The whole job: what to find or do, where to look, and what the report must contain."},` +
		`"kind":{"type":"string","description":"explore (default): read-only. general: may also edit and run commands, with approval. Or the name of a custom sub-agent the system prompt lists."}},` +
		`"required":["description","prompt"],"additionalProperties":false}`),
}

// taskTool puts the task tool in the catalog. Its calls never reach Run:
// runCall starts the children (see runBatch).
type taskTool struct{}

func (taskTool) Spec() tool.Spec     { return taskSpec }
func (taskTool) NeedsApproval() bool { return false }
func (taskTool) Run(context.Context, *tool.Env, json.RawMessage) tool.Result {
	return tool.Result{IsError: true, Content: "task: a sub-agent can only be started by the model inside a turn; send the job as a message instead"}
}

// Parent is what a session lends its sub-agents: its identity, store and
// clock, its permission gate and the environment of its commands, the
// sub-agents' model and the hooks around every call. Children call it from
// their own goroutines, several at once.
type Parent interface {
	// ID, Workspace and Cycle name the parent session and its cycle now.
	ID() string
	Workspace() string
	Cycle() int
	Now() time.Time
	// Store holds the children's transcripts, ledger rows and blobs.
	Store() *storage.Store
	// Gate decides every call that needs approval; Env is the
	// environment of the parent's commands (confinement, sandbox,
	// recorder), which the children share.
	Gate() *tool.Gate
	Env() tool.Env
	// WireRules are the history rules of a child's log.
	WireRules() transcript.WireRules
	// Model is the sub-agents' model's name; Send streams a request to
	// it, with the session's cache key.
	Model() string
	Send(ctx context.Context, req llm.Request) (*llm.Response, error)
	// Window is the sub-agents' model's context window in tokens (0 when
	// unknown): a child keeps its context inside it.
	Window() int
	// Row is the ledger row of a child's response, whose log then holds
	// messages messages; AddRow stores it.
	Row(resp *llm.Response, messages int) ledger.Row
	AddRow(tx *storage.Tx, row ledger.Row) error
	// Execute runs a child's call through the parent's hooks, with run
	// doing the rest (the gate and the tool).
	Execute(ctx context.Context, env tool.Env, call transcript.ToolCall, args string, run func(context.Context, string) tool.Result) tool.Result
	// StoreImage stores a picture a tool returned.
	StoreImage(name string, data []byte, info images.Info) (transcript.ImageRef, error)
	// Emit reports a child's progress.
	Emit(Update)
}

// Update is a child's progress: Kind says what happened (UpdateStart,
// UpdateMessage, UpdateStep, UpdateChecklist, UpdateEnd), Info is the
// child as it is now.
type Update struct {
	Kind string
	Info Info
	// Message is the message committed (UpdateStart and UpdateMessage),
	// at Index of the child's log.
	Message *transcript.Message
	Index   int
	// Checklist is the child's checklist (UpdateChecklist).
	Checklist []todo.Item
	// Reason and Err say how the child ended (UpdateEnd).
	Reason, Err string
}

// The kinds of Update.
const (
	UpdateStart     = "subagent_start"
	UpdateMessage   = "subagent_message"
	UpdateStep      = "subagent_step"
	UpdateChecklist = "subagent_checklist"
	UpdateEnd       = "subagent_end"
)

// Hub is a session's live sub-agent state. It has its own lock: the app
// reads it while the parent's turn holds the session lock.
type Hub struct {
	p       Parent
	cfg     Config
	userDir string // the user's configuration folder, for custom sub-agents
	mu      sync.Mutex
	next    int                    // the number of the last child started; 0 until loaded
	running map[string]*child      // by child ID
	results map[string]tool.Result // finished batch results by parent call ID
}

// NewHub returns the sub-agents of parent, limited by cfg; userDir is the
// user's configuration folder, where custom sub-agents are found beside
// the workspace's ("" for none).
func NewHub(parent Parent, cfg Config, userDir string) *Hub {
	return &Hub{p: parent, cfg: cfg, userDir: userDir}
}

// Tool is the task tool for the parent's catalog.
func Tool() tool.Tool { return taskTool{} }

// RunCall runs calls[i], a task call: together with the task calls right
// after it, as one batch of children (see runBatch) whose results the
// following calls then take in order. A child reads its task from the
// stored (redacted) call, as the parent's model does.
func (h *Hub) RunCall(ctx context.Context, calls []transcript.ToolCall, i int) tool.Result {
	c := calls[i]
	if res, ok := h.takeResult(c.ID); ok {
		return res
	}
	j := i
	for j < len(calls) && calls[j].Name == TaskToolName {
		j++
	}
	h.runBatch(ctx, calls[i:j])
	res, _ := h.takeResult(c.ID)
	return res
}

// takeResult removes and returns the batch result of a call.
func (h *Hub) takeResult(callID string) (tool.Result, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	res, ok := h.results[callID]
	delete(h.results, callID)
	return res, ok
}

// DropResults forgets batch results no call took (the calls after a
// stop); the parent calls it when its round of calls ends.
func (h *Hub) DropResults() {
	h.mu.Lock()
	h.results = nil
	h.mu.Unlock()
}

// runBatch runs one child per call, at most Config.Parallel at
// once, and returns when all have ended, with their results stored by
// call ID. The children share nothing with the parent's log; ctx ending
// (Stop) cancels all of them.
func (h *Hub) runBatch(ctx context.Context, calls []transcript.ToolCall) {
	slots := make(chan struct{}, h.cfg.parallel())
	var wg sync.WaitGroup
	for _, c := range calls {
		ch, bad := h.newChild(ctx, c)
		if ch == nil {
			h.putResult(c.ID, bad)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
			}
			h.putResult(c.ID, ch.runSafely())
		}()
	}
	wg.Wait()
}

func (h *Hub) putResult(callID string, res tool.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.results == nil {
		h.results = map[string]tool.Result{}
	}
	h.results[callID] = res
}

// parseTask reads a task call's arguments and decides whether the child
// may start; the error is the result for the model when it may not.
func (h *Hub) parseTask(c transcript.ToolCall) (TaskParams, *Kind, *tool.Result) {
	var p TaskParams
	var custom *Kind
	fail := func(format string, args ...any) (TaskParams, *Kind, *tool.Result) {
		return p, nil, &tool.Result{IsError: true, Content: "task: " + fmt.Sprintf(format, args...)}
	}
	var bad struct {
		Raw *string `json:"_malformed_arguments"`
	}
	if json.Unmarshal([]byte(c.Arguments), &bad) == nil && bad.Raw != nil {
		return fail("the arguments were not a valid JSON object; call task again with {\"description\": …, \"prompt\": …}")
	}
	if err := tool.DecodeArgs(json.RawMessage(c.Arguments), &p); err != nil {
		return fail("%v", err)
	}
	p.Description, p.Prompt = strings.TrimSpace(p.Description), strings.TrimSpace(p.Prompt)
	if p.Prompt == "" {
		return fail("the prompt is empty; give the sub-agent the whole job in prompt")
	}
	if p.Description == "" {
		p.Description = text.Clip(strings.Join(strings.Fields(p.Prompt), " "), 60)
	}
	switch p.Kind {
	case "":
		p.Kind = Explore
	case Explore:
	case General:
		if h.p.Gate().Mode() == tool.ModeReadOnly {
			return fail("the session is in read-only mode, so a general sub-agent could change nothing; use kind explore, or ask the user to switch the mode")
		}
	default:
		k, ok := h.findAgent(p.Kind)
		if !ok {
			return fail("kind %q is not explore, general or a custom sub-agent; use one of those", text.Clip(p.Kind, 40))
		}
		if k.writes() && h.p.Gate().Mode() == tool.ModeReadOnly {
			return fail("the session is in read-only mode and the sub-agent %s may change files or run commands; use kind explore, or ask the user to switch the mode", k.Name)
		}
		custom = &k
	}
	return p, custom, nil
}

// List returns the session's sub-agents, oldest first: the stored ones
// with the live state of those running now. It never waits for a running
// turn.
func (h *Hub) List() ([]Info, error) {
	stored, err := readChildIndex(h.p.Store(), h.p.ID())
	if err != nil {
		return nil, err
	}
	// Children of one batch enter the index as they start; order them
	// by number.
	slices.SortStableFunc(stored, func(a, b Info) int { return childNumber(a.ID) - childNumber(b.ID) })
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, c := range stored {
		if ch, ok := h.running[c.ID]; ok {
			stored[i] = ch.snapshot()
		} else if c.Status == Running {
			stored[i].Status = Interrupted
		}
	}
	return stored, nil
}

// childNumber is the N of a child ID "sub-N" (0 for another ID).
func childNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "sub-"))
	return n
}

// Read returns a sub-agent's info and its whole stored transcript
// (the job, every request's reply and every tool result), as of its last
// committed step. It never waits for a running turn.
func (h *Hub) Read(id string) (Info, []transcript.Message, error) {
	all, err := h.List()
	if err != nil {
		return Info{}, nil, err
	}
	for _, c := range all {
		if c.ID == id {
			msgs, err := readChildLog(h.p.Store(), h.p.ID(), id)
			return c, msgs, err
		}
	}
	return Info{}, nil, fmt.Errorf("session %q has no sub-agent %q; list them with List", h.p.ID(), id)
}

// Stop cancels one running sub-agent; the parent's turn goes on and
// gets a result saying the user stopped it. Stopping the turn stops every
// child.
func (h *Hub) Stop(id string) error {
	h.mu.Lock()
	ch, ok := h.running[id]
	h.mu.Unlock()
	if !ok {
		return fmt.Errorf("sub-agent %q is not running; it may have finished already", id)
	}
	ch.stop()
	return nil
}

// RunningAlerts are the status block's lines for the children running
// now, sorted by ID. Children run inside the parent's tool round, so the
// parent's own requests do not see any today; the lines keep the block
// truthful for any request built while one runs.
func (h *Hub) RunningAlerts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, ch := range h.running {
		c := ch.snapshot()
		out = append(out, fmt.Sprintf("subagent %s running: %q (%s, step %d/%d)", c.ID, c.Title, c.Kind, c.Steps, c.MaxSteps))
	}
	slices.Sort(out)
	return out
}

// AskerOf names the running sub-agent whose call ctx belongs to, "" for
// the parent's own agent. A child's calls run under its own context (or
// one derived from it by value), whose Done channel is the child's.
func (h *Hub) AskerOf(ctx context.Context) string {
	done := ctx.Done()
	if done == nil {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ch := range h.running {
		if ch.ctx != nil && ch.ctx.Done() == done {
			return fmt.Sprintf("%s (%s: %q)", ch.info.ID, ch.info.Kind, text.Clip(ch.info.Title, 60))
		}
	}
	return ""
}
