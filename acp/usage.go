package acp

import (
	"crypto/rand"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/agent"
	costs "github.com/tally-dev/tally/engine/ledger"
)

// usageUpdate is Tally's ledger figures as a usage_update: the context
// level against the window (used, size), the session's cost so far at
// the models' prices (cost, in US dollars; left out when a model has no
// price) and, under _meta.tally, the figures ACP has no field for.
func (st *session) usageUpdate(level, window int, exact bool) (acp.SessionUpdate, bool) {
	if window <= 0 || level < 0 {
		return acp.SessionUpdate{}, false
	}
	v := st.sess.Snapshot()
	figures := map[string]any{"exact": exact, "model": v.Meta.Model}
	if v.CompactAt > 0 {
		figures["compactAt"] = v.CompactAt
	}
	if v.CycleAt > 0 {
		figures["cycleAt"] = v.CycleAt
	}
	u := &acp.SessionUsageUpdate{Used: level, Size: window}
	rows, err := st.sess.Audit().Ledger()
	wb, werr := st.srv.workbench()
	if err == nil && werr == nil {
		tot := costs.Sum(rows, wb.Settings().PriceFor)
		figures["requests"] = tot.Requests
		figures["promptTokens"] = tot.Prompt
		figures["cacheHitTokens"] = tot.Hit
		figures["cacheMissTokens"] = tot.Miss
		figures["completionTokens"] = tot.Completion
		figures["cacheHitRatio"] = tot.HitRatio
		if tot.Priced {
			u.Cost = &acp.Cost{Amount: tot.Cost, Currency: "USD"}
			figures["costWithoutCache"] = tot.ZeroCacheCost
		} else if tot.Requests > 0 {
			figures["costNote"] = "no price is known for a model of this session; set one in the app's Settings"
		}
	}
	u.Meta = map[string]any{"tally": figures}
	return acp.SessionUpdate{UsageUpdate: u}, true
}

// sendUsage sends the session's current level and cost: when it opens and
// when its model (and so its window) changes.
func (st *session) sendUsage() {
	if !st.ready() {
		return
	}
	v := st.sess.Snapshot()
	if u, ok := st.usageUpdate(v.Level, v.Window, v.Exact); ok {
		st.send(u)
	}
}

// usage reports one response's usage event.
func (st *session) usage(u *agent.Usage) {
	if u == nil {
		return
	}
	if up, ok := st.usageUpdate(u.ContextTokens, u.Window, u.Exact); ok {
		st.send(up)
	}
}

// newMessageID is a fresh random UUID (version 4), the form ACP asks for
// message IDs.
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// messageID is the ID of the assistant message being streamed, made at
// its first chunk; endMessage starts the next one.
func (st *session) messageID() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.msgID == "" {
		st.msgID = newMessageID()
	}
	return st.msgID
}

func (st *session) endMessage() {
	st.mu.Lock()
	st.msgID = ""
	st.mu.Unlock()
}

// withID sets messageId on a message or thought chunk.
func withID(u acp.SessionUpdate, id string) acp.SessionUpdate {
	switch {
	case u.AgentMessageChunk != nil:
		u.AgentMessageChunk.MessageId = &id
	case u.AgentThoughtChunk != nil:
		u.AgentThoughtChunk.MessageId = &id
	case u.UserMessageChunk != nil:
		u.UserMessageChunk.MessageId = &id
	}
	return u
}
