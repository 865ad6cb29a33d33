package rewrite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// NewCycle closes the current cycle now and opens the next one, as the
// user asked.
func (r *Session) NewCycle(ctx context.Context) error {
	if r.host.Log().Len() == 0 {
		return errors.New("this cycle is empty; there is nothing to archive yet")
	}
	return r.roll(ctx, cycle.ModeManual)
}

// roll closes the current cycle and opens the next one: the model writes
// a hand-off brief, the cycle is archived (its log stays in the store;
// the archive record holds the brief and stats), and the new cycle starts
// from the original system prompt, a [CYCLE STATE] seed, a one-line
// acknowledgement and the user's latest request.
func (r *Session) roll(ctx context.Context, mode string) error {
	h := r.host
	brief, err := r.brief(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		brief = "(no hand-off brief: the model could not write one — " + err.Error() + ". Rely on the checklist and re-read the files you need.)"
	}
	level, _ := h.Level()
	now := h.Now()
	meta, st := h.Meta(), h.State()
	arch := archiveRecord{Cycle: meta.Cycle, Started: st.CycleStarted, Ended: now, Brief: brief, Tokens: level, Requests: st.CycleRequests}
	if arch.Started.IsZero() {
		arch.Started = meta.Created
	}
	next := meta.Cycle + 1
	carried, blobs := r.handOver()
	build := func(brief string) (seed, msgs []transcript.Message) {
		seed = cycle.Messages(cycle.State{
			Mode: mode, Workspace: meta.Workspace, Cycle: next,
			Checklist: h.Checklist(), WorkingSet: h.WorkingSet(), Brief: brief,
			Subagents: h.SubagentLines(),
			UserWords: carried.Words, UserStubs: carried.Stubs, Record: carried.Record.Render(compact.RecordTokens),
		}, now)
		msgs = seed
		// Mid-turn (an automatic cycle) the user's latest request is the
		// work in progress and carries over. A cycle started between turns
		// does not copy it: it was answered, and repeating it would show
		// the model an answered request as open; the user's next message
		// follows the seed.
		if mode == cycle.ModeAuto {
			if u, ok := lastUserText(h.Log()); ok {
				msgs = append(msgs, u)
			}
		}
		return seed, msgs
	}
	seed, msgs := build(brief)
	// The new cycle starts under the compaction level, or it would compact
	// or roll again at its first request: a brief too long for that is cut.
	if room := r.seedRoom(); room > 0 {
		if over := seedTokens(msgs) - room; over > 0 {
			brief = cycle.CutBrief(brief, max(tokens.Count(brief)-over, compact.MinOutput))
			seed, msgs = build(brief)
		}
	}
	// Turn numbers run on across cycles, so the record's "latest turn
	// wins" holds for what earlier cycles recorded too.
	turns := st.Carry.TurnBase
	for _, m := range h.Log().Messages() {
		if m.IsPlainUserText() {
			turns++
		}
	}
	if len(msgs) > len(seed) {
		turns-- // the carried request starts the new log again
	}
	_, err = h.Rebuild(Request{Kind: Cycle, Reason: "cycle", Messages: msgs, Cycle: next, Summary: brief,
		Detail: fmt.Sprintf("cycle %d archived; cycle %d started", meta.Cycle, next),
		State: func(st *State) {
			st.Summary = ""
			st.Carry, st.Carried = Carry{TurnBase: max(turns, 0)}, carried
			st.Breakers.Reset()
			st.CycleStarted, st.CycleRequests = now, 0
		},
		Extra: func(tx *storage.Tx) error {
			for _, b := range blobs {
				if _, err := tx.PutBlob([]byte(b)); err != nil {
					return err
				}
			}
			a, _ := json.Marshal(arch)
			_, err := tx.AddRecord(storage.KindArchive, meta.ID, a)
			return err
		}})
	if err != nil {
		return fmt.Errorf("could not save the new cycle (%w); the session continues in cycle %d", err, meta.Cycle)
	}
	return nil
}

// handOver is what the next cycle's seed carries of the user's words and
// the work so far: the words of the earlier cycles and of this one, newest
// verbatim within the user's-words budget and older ones as stub lines,
// and the work record of every cycle. It returns the texts the stubs'
// handles name, to be stored as blobs.
func (r *Session) handOver() (CycleCarry, []string) {
	h := r.host
	st := h.State()
	msgs := h.Log().Messages()
	compactAt, _ := r.Thresholds()
	w, _ := h.Window()
	budget := compact.UserWordsBudget(compact.Input{Threshold: compactAt, PrefixTokens: h.PrefixTokens(), Window: w})
	// Earlier cycles' verbatim words come first, as messages, so one
	// budget rule decides over all of them.
	var all []transcript.Message
	for _, w := range st.Carried.Words {
		all = append(all, transcript.UserText("", w, time.Time{}))
	}
	all = append(all, msgs...)
	words, stubs := compact.UserWords(all, st.Carry.TurnBase-len(st.Carried.Words), budget)
	var blobs []string
	kept := map[string]bool{}
	for _, w := range words {
		kept[w] = true
	}
	for _, m := range all {
		if m.IsPlainUserText() && !kept[m.Body()] {
			blobs = append(blobs, m.Body())
		}
	}
	c := CycleCarry{Words: words}
	c.Stubs = append(append(append(c.Stubs, st.Carried.Stubs...), st.Carry.Earlier.UserStubs...), stubs...)
	if n := len(c.Stubs) - compact.MaxCarriedStubs; n > 0 {
		c.Stubs = c.Stubs[n:] // the oldest go first
	}
	c.Record = st.Carried.Record.Merge(compact.LogRecord(st.Carry.Record, msgs, st.Carry.TurnBase, st.Carry.RemovedTurns))
	return c, blobs
}

// lastUserText returns the newest message the human typed in log.
func lastUserText(log *transcript.AppendLog) (transcript.Message, bool) {
	for i := log.Len() - 1; i >= 0; i-- {
		if m := log.At(i).Msg; m.IsPlainUserText() {
			return m, true
		}
	}
	return transcript.Message{}, false
}

// seedTokens is what msgs add to the context.
func seedTokens(msgs []transcript.Message) int {
	n := 0
	for _, m := range msgs {
		n += transcript.MessageTokens(m)
	}
	return n
}

// seedRoom is the most a new cycle's seed may hold for the cycle to start
// under the compaction level with a tenth of the window still to work
// in: the level, less the status block, the prefix and that tenth; 0 when
// the window is unknown.
func (r *Session) seedRoom() int {
	w, _ := r.host.Window()
	if w <= 0 {
		return 0
	}
	compactAt, _ := r.Thresholds()
	return max(compactAt-StatusReserve-r.host.PrefixTokens()-w/10, compact.MinOutput)
}

// brief asks the model for the brief to its next self: at most
// cycle.BriefTokens, no more than the seed can hold (seedRoom), and no
// more than the window has room for after the request.
func (r *Session) brief(ctx context.Context) (string, error) {
	h := r.host
	req := cycle.BriefRequest(h.Model().Name, h.System(), h.Catalog(), h.Log().AppendWire(nil))
	limit := cycle.BriefTokens
	if room := r.seedRoom(); room > 0 {
		limit = min(limit, room)
	}
	w, _ := h.Window()
	req.MaxTokens = compact.OutputRoom(req, w, limit)
	resp, err := h.Metered(ledger.KindBrief).Stream(ctx, req, llm.Callbacks{})
	if err != nil {
		return "", err
	}
	content, _ := secrets.Count(resp.Content) // model-written, stored and sent like a reply
	brief := cycle.EnforceBrief(content)
	if brief == "" {
		return "", errors.New("the model returned an empty brief")
	}
	return brief, nil
}
