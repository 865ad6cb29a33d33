package compact

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// SummaryInstruction is the request appended as the last user message of a
// summary call: what to keep, what to leave out, and the length limit.
//
//go:embed summary_instruction.md
var SummaryInstruction string

// SummarySystemPrompt is the short system prompt of the flattened summary
// request, which does not reuse the session's prompt.
//
//go:embed summary_system.md
var SummarySystemPrompt string

// Summary-request limits (DESIGN §4).
const (
	// CacheAlignedMinWindow is the smallest window for which the summary
	// request replays the conversation verbatim to reuse the prefix cache.
	CacheAlignedMinWindow = 500_000
	// instructionReserve is the room kept for the summary instruction when
	// deciding whether a replay fits.
	instructionReserve = 512
	// cacheAlignedShare is the share of the window a replay may fill.
	cacheAlignedShare = 0.85
	// SummaryTemperature is the sampling temperature of the summary call.
	SummaryTemperature float32 = 0.3
	// summaryRetries is how many times a summary request that does not fit
	// the window is retried with fewer messages.
	summaryRetries = 4
	// retryDropShare is the share of the oldest messages dropped before
	// each retry.
	retryDropShare = 0.2
	// FlatToolChars and flatTextChars cap one message's text in the
	// flattened transcript: tool output keeps its head and tail.
	FlatToolChars = 2_000
	flatTextChars = 8_000
)

// CacheAligned reports whether the summary request for plan replays the
// conversation verbatim: the window is at least CacheAlignedMinWindow, the
// replay plus instructionReserve fits cacheAlignedShare of it, and the log
// is a valid, fully answered conversation.
func CacheAligned(in Input, plan Plan) bool {
	if in.Window < CacheAlignedMinWindow || len(plan.Messages) == 0 {
		return false
	}
	if float64(plan.PureTokensAfter+instructionReserve) > cacheAlignedShare*float64(in.Window) {
		return false
	}
	return transcript.CheckPairing(plan.Messages) == nil && len(transcript.Unanswered(plan.Messages)) == 0
}

// SummaryRequest builds the summary call for plan. When [CacheAligned]
// holds it replays the session's system prompt, tools and messages as they
// were sent, so the provider's prefix cache serves all but the rewritten
// tail, and appends the instruction as a final user message. Otherwise it
// sends its own short system prompt and one user message holding a flat
// "User: / Assistant: / Tool (name):" transcript of the messages to
// summarise, then the instruction. Either way the request has at most one
// system message, at index 0, and no unanswered tool call.
func SummaryRequest(in Input, plan Plan, model, system string, tools []chat.Tool) llm.Request {
	in = normalized(in)
	if len(plan.Messages) != len(in.Messages) || len(plan.Tokens) != len(plan.Messages) {
		plan = PlanCascade(in)
	}
	if CacheAligned(in, plan) {
		return replayRequest(in, plan, model, system, tools)
	}
	return flatRequest(in, plan, plan.Summarize, model)
}

func summaryRequestBase(model string, msgs []chat.Message, tools []chat.Tool) llm.Request {
	t := SummaryTemperature
	return llm.Request{Model: model, Messages: llm.JoinUserRuns(msgs), Tools: tools, MaxTokens: SummaryTokens, Temperature: &t}
}

func replayRequest(in Input, plan Plan, model, system string, tools []chat.Tool) llm.Request {
	var msgs []chat.Message
	if system != "" {
		msgs = append(msgs, chat.Message{Role: chat.RoleSystem, Content: system})
	}
	msgs = append(msgs, wireOf(in, plan)...)
	msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: strings.TrimSpace(SummaryInstruction)})
	return summaryRequestBase(model, msgs, tools)
}

// wireOf returns the wire messages of plan.Messages: the cached bytes of
// in.Wire for every message the pure layers left alone, fresh renderings
// for the rest.
func wireOf(in Input, plan Plan) []chat.Message {
	changed := map[int]bool{}
	for _, l := range plan.Layers {
		if l.Name != LayerMicro && l.Name != layerPrune {
			continue
		}
		for _, c := range l.Changes {
			changed[c.Index] = true
		}
	}
	cached := len(in.Wire) == len(in.Messages)
	log := transcript.NewAppendLog(tokens.Count, transcript.WireRules{})
	out := make([]chat.Message, len(plan.Messages))
	for i, m := range plan.Messages {
		if cached && !changed[i] {
			out[i] = in.Wire[i]
			continue
		}
		out[i] = log.Append(m).Wire
	}
	return out
}

// flatRequest builds the flattened summary request over the messages of
// plan at idx.
func flatRequest(in Input, plan Plan, idx []int, model string) llm.Request {
	var b strings.Builder
	if prev := strings.TrimSpace(in.PreviousSummary); prev != "" {
		b.WriteString("Summary from an earlier compaction, which the transcript continues:\n\n")
		b.WriteString(prev)
		b.WriteString("\n\n")
	}
	b.WriteString("Transcript to summarise:\n\n")
	wrote := false
	for _, i := range idx {
		if i < 0 || i >= len(plan.Messages) {
			continue
		}
		if line := flatLine(plan.Messages[i]); line != "" {
			b.WriteString(line)
			b.WriteString("\n\n")
			wrote = true
		}
	}
	if !wrote {
		b.WriteString("(no messages)\n\n")
	}
	b.WriteString("---\n\n")
	b.WriteString(strings.TrimSpace(SummaryInstruction))
	msgs := []chat.Message{
		{Role: chat.RoleSystem, Content: strings.TrimSpace(SummarySystemPrompt)},
		{Role: chat.RoleUser, Content: b.String()},
	}
	return summaryRequestBase(model, msgs, nil)
}

// flatLine renders one message of the flattened transcript; engine status
// bars and tool results an earlier layer already replaced by a placeholder
// render as "" (the call's line names what was called).
func flatLine(m transcript.Message) string {
	switch m.Role {
	case transcript.Tool:
		if Shrunk(m.Text()) {
			return ""
		}
		label := "Tool (" + orTool(m.ToolName)
		if m.IsError {
			label += ", failed"
		}
		return label + "): " + headTail(m.Text(), FlatToolChars)
	case transcript.Assistant:
		var parts []string
		if t := m.Text(); t != "" {
			parts = append(parts, "Assistant: "+cutRunesMarked(t, flatTextChars))
		}
		for _, c := range m.ToolCalls {
			parts = append(parts, "Assistant called "+toolDesc(c.Name, canonical(c.Arguments)))
		}
		if len(parts) == 0 {
			return "Assistant: (no reply)"
		}
		return strings.Join(parts, "\n")
	}
	body := cutRunesMarked(m.Body(), flatTextChars)
	switch m.Kind {
	case transcript.KindChat:
		return "User: " + body
	case transcript.KindStatus:
		return ""
	case transcript.KindSeed:
		return "Cycle state: " + body
	default:
		return "Engine (" + string(m.Kind) + "): " + body
	}
}

// headTail keeps the first and last halves of n runes of s, marking the gap.
func headTail(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	r := []rune(s)
	half := n / 2
	return string(r[:half]) + fmt.Sprintf("\n[… %s chars omitted …]\n", text.Thousands(total-n)) + string(r[total-(n-half):])
}

func cutRunesMarked(s string, n int) string {
	cut := cutRunes(s, n)
	if len(cut) == len(s) {
		return s
	}
	return cut + fmt.Sprintf(" [… %s more chars]", text.Thousands(utf8.RuneCountInString(s)-n))
}

// Summarize asks m for the summary plan needs and returns it, capped at
// [SummaryTokens]. It asks for at most [SummaryLimit] tokens, and never
// for more than the window has room for after the request ([OutputRoom]). When the request does not fit the model's window it
// drops the oldest [retryDropShare] of the messages being summarised and
// retries with the flattened request, at most [summaryRetries] times; the
// dropped messages are then lost rather than summarised. An empty answer is
// an error.
func Summarize(ctx context.Context, m llm.Model, in Input, plan Plan, model, system string, tools []chat.Tool) (string, error) {
	if m == nil {
		return "", errors.New("no model is configured for the summary; choose a model in the connection settings")
	}
	in = normalized(in)
	if len(plan.Messages) != len(in.Messages) || len(plan.Tokens) != len(plan.Messages) {
		plan = PlanCascade(in)
	}
	idx := append([]int(nil), plan.Summarize...)
	if len(idx) == 0 {
		return "", errors.New("there is nothing to summarise because every message is pinned; apply the plan without a summary")
	}
	req := SummaryRequest(in, plan, model, system, tools)
	limit := SummaryLimit(in, plan)
	for retry := 0; ; retry++ {
		req.MaxTokens = OutputRoom(req, in.Window, limit)
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("the summary was cancelled (%w); run /compact again when ready", err)
		}
		resp, err := m.Stream(ctx, req, llm.Callbacks{})
		if err != nil {
			if !llm.IsContextLengthExceeded(err) {
				return "", fmt.Errorf("the summary call failed (%w); try /compact again or switch to another model", err)
			}
			if retry == summaryRetries {
				return "", fmt.Errorf("the summary request still did not fit the window after %d retries (%w); start a new cycle instead", summaryRetries, err)
			}
			drop := max(1, int(float64(len(idx))*retryDropShare+0.999))
			if drop >= len(idx) {
				return "", fmt.Errorf("even the newest messages do not fit the summary request (%w); start a new cycle instead", err)
			}
			idx = idx[drop:]
			req = flatRequest(in, plan, idx, model)
			continue
		}
		text := ""
		if resp != nil {
			// Model-written, stored and sent like a reply: redacted once here.
			text, _ = secrets.Redact(strings.TrimSpace(resp.Content))
		}
		if text == "" {
			return "", errors.New("the model returned an empty summary; try /compact again or switch to another model")
		}
		return CapSummary(text), nil
	}
}

// Output room of the engine's own calls (summary and brief).
const (
	// outputMargin is kept free in the window besides the request and
	// its answer: the estimate's drift and the template's tokens.
	outputMargin = 256
	// MinOutput is the least an engine call asks for, even in a window
	// with less room (the server then refuses it, which the caller
	// reports).
	MinOutput = 256
)

// OutputRoom returns the max_tokens for req in a window of window tokens:
// limit, or less when the window's room after the request (its messages
// and tools by Tally's count) and outputMargin is smaller, and never
// under MinOutput. An unknown window (0) gives limit. Only a request
// whose bytes come near the window is counted.
func OutputRoom(req llm.Request, window, limit int) int {
	if window <= 0 {
		return limit
	}
	// A token is at least a byte: when the request's bytes leave room for
	// limit, so do its tokens, and the request (a whole conversation, in
	// a large window) is not counted.
	bytes := outputMargin
	for _, m := range req.Messages {
		bytes += len(m.Content) + tokens.MessageOverhead
		for _, c := range m.ToolCalls {
			bytes += len(c.Name) + len(c.Arguments)
		}
	}
	enc, err := chat.EncodeTools(req.Tools)
	if err == nil && len(req.Tools) > 0 {
		bytes += len(enc)
	}
	if window-bytes >= limit {
		return limit
	}
	used := outputMargin
	for _, m := range req.Messages {
		used += tokens.Count(m.Content) + tokens.MessageOverhead
		for _, c := range m.ToolCalls {
			used += tokens.Count(c.Name) + tokens.Count(c.Arguments)
		}
	}
	if err == nil && len(req.Tools) > 0 {
		used += tokens.Count(string(enc))
	}
	return max(min(limit, window-used), MinOutput)
}

// SummaryLimit is the most a summary of plan is asked to be: half of the
// tokens it replaces, at least summaryFloor and at most [SummaryTokens] —
// a summary as long as what it replaces saves nothing (see
// [Result.SummaryRejected]).
func SummaryLimit(in Input, plan Plan) int {
	replaced := 0
	for _, i := range plan.Summarize {
		if i >= 0 && i < len(plan.Tokens) {
			replaced += plan.Tokens[i]
		}
	}
	return min(SummaryTokens, max(in.scaled(replaced)/2, summaryFloor))
}
