package subagent

import (
	"context"
	"fmt"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/storage"
)

// A child's context is kept inside its window the way the turn's is, by
// the same cascade (package compact), cheapest first: once the child
// reaches the auto-compaction threshold of its window, stale tool results
// are cleared and duplicates pruned. Only when that leaves no room for the
// next step does the child summarise, with its own model: the summary is
// merged into its system prompt as the turn's is, the pinned messages
// stay, and the summary request is a ledger row of its own. When even that
// cannot bring it inside its window it ends with what it has, as
// ReasonContextFull, instead of sending a request the provider would
// refuse. The child's stored transcript keeps every message; only what it
// sends is rewritten.

// ReasonContextFull ends a child whose context no longer fits its window
// after the cheap layers ran.
const ReasonContextFull = "context_full"

// replyRoom is the room a child's window keeps free for the reply and
// the next step's results.
func replyRoom(window int) int { return max(window/8, 1024) }

// level is the child's context size: the provider's count of its last
// request and estimates of what was appended since (tokens.Anchor), or,
// after a rewrite and before the first request, its own count of the
// prefix and the log.
func (c *child) level() int {
	n, _ := c.anchor.Estimate(func(i int) int { return c.log.At(i).Tokens }, c.log.Len(), c.log.Tokens(), c.prefixTok, 0)
	return n
}

// relieve runs the cheap layers when the child's level reached its
// threshold; it returns ReasonContextFull when even then the next request
// would not fit the window.
func (c *child) relieve() (string, error) {
	window := c.p.Window()
	if window <= 0 {
		return "", nil
	}
	threshold := compact.AbovePrefix(compact.Threshold(window, true), 0, window, c.prefixTok)
	level := c.level()
	if level < threshold {
		return "", nil
	}
	in := c.input(window, threshold)
	plan := compact.PlanCascade(in)
	res := compact.Apply(in, plan, "") // no summary: only the cheap layers' rewrites
	if res.TokensAfter < level {
		c.log.Rebuild("sub-agent compaction", res.Messages, c.p.Now())
		c.anchor.Invalidate()
		c.req.Log = c.log
		c.req.SetPrefix(c.prompt(), c.catalog) // the skeleton is built again from the new log
		c.update(func(i *Info) { i.Compactions++ })
		level = c.level()
	}
	if level+replyRoom(window) > window {
		level = c.summarise(window, threshold)
	}
	if level+replyRoom(window) > window {
		c.fullNote = fmt.Sprintf("The sub-agent's context (%s tokens) no longer fits its %s-token window even after its old tool results were cleared and its history summarised; this is what it had when it stopped.",
			text.Thousands(level), text.Thousands(window))
		return ReasonContextFull, nil
	}
	return "", nil
}

// summarise cuts the child's log to its pinned messages under a summary
// its model writes, merged into its system prompt, and returns its level
// then; a summary that fails or would not shrink the context changes
// nothing.
func (c *child) summarise(window, threshold int) int {
	in := c.input(window, threshold)
	in.Force = true
	plan := compact.PlanCascade(in)
	if !plan.NeedsSummary || len(plan.Summarize) == 0 {
		return c.level()
	}
	summary, err := compact.Summarize(c.ctx, llm.Func(c.sendSummary), in, plan, c.p.Model(), c.prompt(), c.catalog)
	if err != nil {
		return c.level()
	}
	res := compact.Apply(in, plan, summary)
	if res.Source == "" {
		return c.level()
	}
	c.log.Rebuild("sub-agent summary", res.Messages, c.p.Now())
	c.anchor.Invalidate()
	c.req.Log = c.log
	c.section = res.SummarySection // it was written with the earlier one in view
	c.prefixTok = prefixTokens(c.prompt(), c.req.SetPrefix(c.prompt(), c.catalog))
	c.update(func(i *Info) { i.Compactions++ })
	return c.level()
}

// input is what the cascade works from for the child now: its log with
// each message's count, its prefix and level, in a window of window
// tokens with compaction at threshold.
func (c *child) input(window, threshold int) compact.Input {
	toks := make([]int, c.log.Len())
	for i := range toks {
		toks[i] = c.log.At(i).Tokens
	}
	return compact.Input{Messages: c.log.Messages(), Tokens: toks, PrefixTokens: c.prefixTok, Level: c.level(), Threshold: threshold,
		Window: window, Now: c.p.Now(), Target: compact.Target(threshold, c.prefixTok)}
}

// prompt is the child's system prompt: its kind's, and the summary
// section of its last summary when it wrote one.
func (c *child) prompt() string {
	if c.section == "" {
		return c.system
	}
	return c.system + "\n\n" + c.section
}

// sendSummary sends the child's summary request and stores its ledger
// row, marked as a summary of this child.
func (c *child) sendSummary(ctx context.Context, req llm.Request, _ llm.Callbacks) (*llm.Response, error) {
	resp, err := c.p.Send(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	row := c.p.Row(resp, len(req.Messages))
	row.Subagent, row.Kind = c.info.ID, ledger.KindSummary
	if c.model != "" {
		row.Model = c.model
	}
	err = c.p.Store().Update(func(tx *storage.Tx) error { return c.p.AddRow(tx, row) })
	return resp, err
}

// lastAnswer is the text of the child's last reply, its report when it
// has to stop before it wrote one.
func (c *child) lastAnswer() string {
	for i := c.log.Len() - 1; i >= 0; i-- {
		if m := c.log.At(i).Msg; m.Role == transcript.Assistant && m.Text() != "" {
			return m.Text()
		}
	}
	return ""
}

// prefixTokens counts what the child's system prompt and catalogue cost
// in each request.
func prefixTokens(system string, enc []byte) int {
	return transcript.WireTokens(chat.Message{Role: chat.RoleSystem, Content: system}, tokens.Count) + tokens.Count(string(enc))
}
