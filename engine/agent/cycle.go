package agent

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
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// rollCycle closes the current cycle and opens the next one: the model
// writes a hand-off brief, the cycle is archived (its log stays in the
// store; the archive record holds the brief and stats), and the new cycle
// starts from the original system prompt, a [CYCLE STATE] seed, a one-line
// acknowledgement and the user's latest request.
func (s *Session) rollCycle(ctx context.Context, mode string) error {
	brief, err := s.handOffBrief(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		brief = "(no hand-off brief: the model could not write one — " + err.Error() + ". Rely on the checklist and re-read the files you need.)"
	}
	level, _ := s.level()
	now := s.cfg.now()
	arch := archiveRecord{Cycle: s.meta.Cycle, Started: s.st.CycleStarted, Ended: now, Brief: brief, Tokens: level, Requests: s.st.CycleRequests}
	if arch.Started.IsZero() {
		arch.Started = s.meta.Created
	}
	next := s.meta.Cycle + 1
	carried, blobs := s.handOver()
	seed := cycle.Messages(cycle.State{
		Mode: mode, Workspace: s.meta.Workspace, Cycle: next,
		Checklist: s.checklist.Items(), WorkingSet: s.st.WorkingSet.Paths, Brief: brief,
		Subagents: s.subs.CycleLines(),
		UserWords: carried.Words, UserStubs: carried.Stubs, Record: carried.Record.Render(compact.RecordTokens),
	}, now)
	msgs := seed
	// Mid-turn (an automatic cycle) the user's latest request is the work
	// in progress and carries over. A cycle started between turns does not
	// copy it: it was answered, and repeating it would show the model an
	// answered request as open; the user's next message follows the seed.
	if mode == cycle.ModeAuto {
		if u, ok := s.lastUserText(); ok {
			msgs = append(msgs, u)
		}
	}
	// Turn numbers run on across cycles, so the record's "latest turn
	// wins" holds for what earlier cycles recorded too.
	turns := s.st.Carry.TurnBase
	for _, m := range s.log.Messages() {
		if m.IsPlainUserText() {
			turns++
		}
	}
	if len(msgs) > len(seed) {
		turns-- // the carried request starts the new log again
	}
	_, err = s.rebuild(rewrite{Kind: RebuildCycle, Reason: "cycle", Messages: msgs, Cycle: next, Summary: brief,
		Detail: fmt.Sprintf("cycle %d archived; cycle %d started", s.meta.Cycle, next),
		State: func(st *state) {
			st.Summary = ""
			st.Carry, st.Carried = compactCarry{TurnBase: max(turns, 0)}, carried
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
			_, err := tx.AddRecord(storage.KindArchive, s.meta.ID, a)
			return err
		}})
	if err != nil {
		return fmt.Errorf("could not save the new cycle (%w); the session continues in cycle %d", err, s.meta.Cycle)
	}
	return nil
}

// handOver is what the next cycle's seed carries of the user's words and
// the work so far: the words of the earlier cycles and of this one, newest
// verbatim within the user's-words budget and older ones as stub lines,
// and the work record of every cycle. It returns the texts the stubs'
// handles name, to be stored as blobs.
func (s *Session) handOver() (cycleCarry, []string) {
	msgs := s.log.Messages()
	budget := compact.UserWordsBudget(compact.Input{Threshold: s.compactionThreshold(), PrefixTokens: s.prefixTok, Window: s.Window()})
	// Earlier cycles' verbatim words come first, as messages, so one
	// budget rule decides over all of them.
	var all []transcript.Message
	for _, w := range s.st.Carried.Words {
		all = append(all, transcript.UserText("", w, time.Time{}))
	}
	all = append(all, msgs...)
	words, stubs := compact.UserWords(all, s.st.Carry.TurnBase-len(s.st.Carried.Words), budget)
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
	c := cycleCarry{Words: words}
	c.Stubs = append(append(append(c.Stubs, s.st.Carried.Stubs...), s.st.Carry.Earlier.UserStubs...), stubs...)
	if n := len(c.Stubs) - compact.MaxCarriedStubs; n > 0 {
		c.Stubs = c.Stubs[n:] // the oldest go first
	}
	c.Record = s.st.Carried.Record.Merge(compact.LogRecord(s.st.Carry.Record, msgs, s.st.Carry.TurnBase))
	return c, blobs
}

// lastUserText returns the newest message the human typed in this cycle.
func (s *Session) lastUserText() (transcript.Message, bool) {
	for i := s.log.Len() - 1; i >= 0; i-- {
		if m := s.log.At(i).Msg; m.IsPlainUserText() {
			return m, true
		}
	}
	return transcript.Message{}, false
}

// handOffBrief asks the model for the brief to its next self.
func (s *Session) handOffBrief(ctx context.Context) (string, error) {
	req := cycle.BriefRequest(s.model().ModelName, s.st.System, s.req.Catalog(), s.replayWire())
	resp, err := s.metered(ledger.KindBrief).Stream(ctx, req, llm.Callbacks{})
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

// NewCycle closes the current cycle now and opens the next one, as the
// user asked.
func (s *Session) NewCycle(ctx context.Context) error {
	end, ok := s.beginWork()
	if !ok {
		return ErrBusy
	}
	defer end()
	if s.log.Len() == 0 {
		return errors.New("this cycle is empty; there is nothing to archive yet")
	}
	return s.rollCycle(ctx, cycle.ModeManual)
}

// archiveRecord is the stored record of a closed cycle; its messages stay
// in the cycle's own log in the store.
type archiveRecord struct {
	Cycle    int       `json:"cycle"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Brief    string    `json:"brief"`
	Tokens   int       `json:"tokens"`
	Requests int       `json:"requests"`
}
