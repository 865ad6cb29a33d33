package subagent

import (
	"fmt"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
)

// A child's context is kept inside its window the way the turn's is, by
// the same cascade (package compact), cheap layers only: stale tool
// results are cleared and duplicates pruned once the child reaches the
// auto-compaction threshold of its window. A child is short-lived, so it
// writes no summary: when the cheap layers cannot bring it under its
// window it ends with what it has, as ReasonContextFull, instead of
// sending a request the provider would refuse. The child's stored
// transcript keeps every message; only what it sends is rewritten.

// ReasonContextFull ends a child whose context no longer fits its window
// after the cheap layers ran.
const ReasonContextFull = "context_full"

// replyRoom is the room a child's window keeps free for the reply and
// the next step's results.
func replyRoom(window int) int { return max(window/8, 1024) }

// level is the child's context size by its own count: the prefix and
// the log.
func (c *child) level() int { return c.prefixTok + c.log.Tokens() }

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
	msgs := c.log.Messages()
	toks := make([]int, c.log.Len())
	for i := range toks {
		toks[i] = c.log.At(i).Tokens
	}
	in := compact.Input{Messages: msgs, Tokens: toks, PrefixTokens: c.prefixTok, Level: level, Threshold: threshold,
		Window: window, Now: c.p.Now(), Target: compact.Target(threshold, c.prefixTok)}
	plan := compact.PlanCascade(in)
	res := compact.Apply(in, plan, "") // no summary: only the cheap layers' rewrites
	if res.TokensAfter < level {
		c.log.Rebuild("sub-agent compaction", res.Messages, c.p.Now())
		c.req.Log = c.log
		c.req.SetPrefix(c.system, c.catalog) // the skeleton is built again from the new log
		c.update(func(i *Info) { i.Compactions++ })
		level = c.level()
	}
	if level+replyRoom(window) > window {
		c.fullNote = fmt.Sprintf("The sub-agent's context (%s tokens) no longer fits its %s-token window even after its old tool results were cleared; this is what it had when it stopped.",
			text.Thousands(level), text.Thousands(window))
		return ReasonContextFull, nil
	}
	return "", nil
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
