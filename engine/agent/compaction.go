package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tally-dev/tally/engine/compact"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/safefile"
	"github.com/tally-dev/tally/storage"
)

// CompactionMode says what happens when the context reaches the
// auto-compaction threshold.
type CompactionMode string

// Compaction modes.
const (
	CompactAuto CompactionMode = "auto" // compact without asking (default)
	CompactAsk  CompactionMode = "ask"  // ask the Asker first; headless: skip
	CompactOff  CompactionMode = "off"  // never compact automatically; cycles still roll
)

// ParseCompactionMode accepts "", auto, ask or off.
func ParseCompactionMode(s string) (CompactionMode, error) {
	switch CompactionMode(s) {
	case "":
		return CompactAuto, nil
	case CompactAuto, CompactAsk, CompactOff:
		return CompactionMode(s), nil
	}
	return "", fmt.Errorf("compaction mode %q is not auto, ask or off", s)
}

// Asker is asked before an automatic compaction in CompactAsk mode: it
// sees the dry-run plan and answers whether to apply it. It should return
// ctx.Err() when ctx is done first.
type Asker interface {
	AskCompaction(ctx context.Context, plan compact.Plan) (bool, error)
}

// MemoryFile is the workspace file that may stand in for a summary.
const MemoryFile = "MEMORY.md"

// MaxMemoryBytes caps what is read of MemoryFile.
const MaxMemoryBytes = 64 << 10

// readMemory returns the workspace's MemoryFile, neutralised, or "". It is
// read only when it is a regular file inside the workspace (not a symlink,
// FIFO or device), at most MaxMemoryBytes of it.
func readMemory(workspace string) string {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return ""
	}
	defer root.Close()
	b, _, err := safefile.ReadIn(root, MemoryFile, MaxMemoryBytes)
	if err != nil {
		return ""
	}
	return transcript.Neutralize(strings.ToValidUTF8(string(b), "\uFFFD"))
}

// RebuildInfo describes a log rewrite for the UI.
type RebuildInfo struct {
	Kind         RebuildKind `json:"kind"`
	Reason       string      `json:"reason"`
	TokensBefore int         `json:"tokens_before"`
	TokensAfter  int         `json:"tokens_after"`
	Summary      string      `json:"summary,omitempty"`
	Cycle        int         `json:"cycle,omitempty"`
	// MissTokens is what the rewrite cost in cache terms: the tokens the
	// provider bills as misses once because of it — the next request from
	// the first changed message on (all of it when the system prompt
	// changed) and the uncached input of a summary request.
	MissTokens int `json:"miss_tokens,omitempty"`
	// PaysBackAfter is the number of later requests after which the
	// rewrite has cost less than keeping the history, at the configured
	// prices (compact.CacheCost.BreakEven): 0 when it cost nothing, -1
	// when it saved nothing.
	PaysBackAfter float64 `json:"pays_back_after,omitempty"`
	// CacheBusting is true when the rewrite changed a message the previous
	// request had sent, or the system prompt, so the provider's cache
	// misses from there on. The thrash breaker counts these.
	CacheBusting bool `json:"cache_busting,omitempty"`
	// Fidelity counts what a compaction did to the messages (kept
	// verbatim, summarised, dropped but recallable, gone); nil for other
	// rewrites.
	Fidelity *compact.Fidelity `json:"fidelity,omitempty"`
	// Record is the work record a compaction carries into the rebuilt
	// context (files, commands, failed checks, sub-agents, checklist), as
	// the model reads it; "" for other rewrites.
	Record string `json:"record,omitempty"`
}

// CompactionResult is what a compaction did.
type CompactionResult struct {
	Plan         compact.Plan `json:"plan"`
	Source       string       `json:"source,omitempty"` // summary, memory, or "" (cheap layers only)
	TokensBefore int          `json:"tokens_before"`
	TokensAfter  int          `json:"tokens_after"`
	Applied      bool         `json:"applied"`
	// MissTokens and PaysBackAfter are the rewrite's cost in cache terms
	// and when it pays back, as on its RebuildInfo.
	MissTokens    int     `json:"miss_tokens,omitempty"`
	PaysBackAfter float64 `json:"pays_back_after,omitempty"`
}

// ErrNothingToCompact is returned by a manual compaction that would change
// nothing.
var ErrNothingToCompact = errors.New("there is nothing to compact yet; the history has no messages that can be cleared or summarised")

// statusReserve is the tokens kept for the status block at the tail when
// comparing the level with a threshold.
const statusReserve = 200

// compactionThreshold is the auto-compaction trigger for this session.
func (s *Session) compactionThreshold() int {
	c, _ := s.Thresholds()
	return c
}

// compactInput gathers what the compaction planner needs.
func (s *Session) compactInput(force bool) compact.Input {
	in := compact.Input{
		Messages:        s.log.Messages(),
		Tokens:          s.tokensOf(),
		Wire:            s.replayWire(),
		PrefixTokens:    s.prefixTok,
		Threshold:       s.compactionThreshold(),
		Window:          s.Window(),
		WorkingSet:      append([]string(nil), s.st.WorkingSet.Paths...),
		Now:             s.cfg.now(),
		PreviousSummary: s.st.Summary,
		Force:           force,
		HitPrice:        s.model().HitPrice,
		MissPrice:       s.model().MissPrice,
		Record:          s.st.Carry.Record,
		Earlier:         s.st.Carry.Earlier,
		TurnBase:        s.st.Carry.TurnBase,
		NoFacts:         s.cfg.NoCompactionFacts,
	}
	in.Level, _ = s.level()
	_, in.Ratio = s.measured()
	in.Memory = readMemory(s.meta.Workspace)
	for _, it := range s.checklist.Items() {
		if it.Status != todo.Completed {
			mark := "[ ]"
			if it.Status == todo.InProgress {
				mark = "[~]"
			}
			in.Reminders.Checklist = append(in.Reminders.Checklist, fmt.Sprintf("%s #%s %s", mark, it.ID, it.Content))
		}
	}
	in.Reminders.WorkingSet = in.WorkingSet
	in.Reminders.At = in.Now
	msgs := in.Messages
	for i, m := range msgs {
		if m.Role != transcript.Tool || m.ToolName != "read_file" || m.IsError {
			continue
		}
		var p struct {
			Path string `json:"path"`
		}
		if json.Unmarshal([]byte(m.Args), &p) == nil && p.Path != "" {
			in.Reminders.Reads = append(in.Reminders.Reads, compact.FileRead{Path: p.Path, Text: msgs[i].Text()})
		}
	}
	return in
}

// Preview returns the dry run of a manual compaction now: what
// each layer would do, the pins, the cache cost and when it pays back,
// with the number of requests expected before the ceiling
// (Plan.Cache.Horizon). Nothing changes.
func (h Compaction) Preview() (compact.Plan, error) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log.Len() == 0 {
		return compact.Plan{}, ErrNothingToCompact
	}
	plan := compact.PlanCascade(s.compactInput(true))
	f := s.forecast()
	plan.Cache.Horizon = compact.Horizon(plan.TokensBefore, f.Ceiling, f.Growth)
	return plan, nil
}

// Apply applies a compaction now, as the user asked: it bypasses the
// failure breaker and runs even below the threshold. It may call the model
// for a summary.
func (h Compaction) Apply(ctx context.Context) (CompactionResult, error) {
	s := h.s
	end, ok := s.beginWork()
	if !ok {
		return CompactionResult{}, ErrBusy
	}
	defer end()
	if s.log.Len() == 0 {
		return CompactionResult{}, ErrNothingToCompact
	}
	in := s.compactInput(true)
	return s.compactNow(ctx, in, compact.PlanCascade(in), "manual compaction")
}

// compactNow applies plan, made from in (see compactInput): it summarises
// if needed and rebuilds the log. A forced input is a compaction someone
// asked for: when it changes nothing that is reported, not counted as a
// failure. The caller holds s.mu.
func (s *Session) compactNow(ctx context.Context, in compact.Input, plan compact.Plan, reason string) (CompactionResult, error) {
	s.preCompactHooks(ctx, reason == "manual compaction")
	res := CompactionResult{Plan: plan, TokensBefore: plan.TokensBefore}
	summary := plan.Summary
	if plan.NeedsSummary && summary == "" {
		var err error
		summary, err = compact.Summarize(ctx, s.metered(ledger.KindSummary), in, plan, s.model().ModelName, s.st.System, s.req.Catalog())
		if err != nil {
			if ctx.Err() == nil {
				s.st.Breakers.Failed(s.cfg.now())
			}
			return res, fmt.Errorf("compaction failed while summarising (%w); the history is unchanged", err)
		}
	}
	out := compact.Apply(in, plan, summary)
	if out.Source == "" && !changed(in.Messages, out.Messages) {
		if in.Force {
			return res, ErrNothingToCompact
		}
		s.st.Breakers.Failed(s.cfg.now())
		return res, errors.New("compaction found nothing to clear or summarise")
	}
	// Every dropped message is kept as a blob, so the handle the index
	// gives it reads it back (retrieve_tool_result).
	keepDropped := func(tx *storage.Tx) error {
		for _, d := range out.Dropped {
			if _, err := tx.PutBlob([]byte(d.Text)); err != nil {
				return err
			}
		}
		return nil
	}
	info, err := s.rebuild(rewrite{Kind: RebuildCompaction, Reason: reason, Messages: out.Messages,
		State: func(st *state) {
			if out.SummarySection != "" {
				st.Summary = out.SummarySection
			}
			st.Carry = compactCarry{Record: out.Record, Earlier: out.Earlier, TurnBase: out.TurnBase}
		},
		Summary: summary, Call: plan.Cache, Extra: keepDropped,
		Describe: func(info *RebuildInfo) {
			f := plan.Fidelity
			info.Fidelity = &f
			if !in.NoFacts {
				info.Record = out.Record.Render(compact.RecordTokens)
			}
		}})
	if err != nil {
		return res, err
	}
	if out.Source != "" {
		// Messages that named older paths are gone: rebuild the working
		// set from what the history still shows.
		s.st.WorkingSet = workingSetOf(s.log.Messages(), s.st.WorkingSet)
	}
	s.st.Breakers.Compacted()
	res.Applied, res.Source = true, out.Source
	res.TokensAfter = info.TokensAfter
	res.MissTokens, res.PaysBackAfter = info.MissTokens, info.PaysBackAfter
	s.compactedHooks(ctx)
	return res, nil
}

// workingSetOf rebuilds the working set from the paths msgs still
// mention, in the order of prev where it knew them.
func workingSetOf(msgs []transcript.Message, prev WorkingSet) WorkingSet {
	seen := map[string]bool{}
	for _, m := range msgs {
		for _, p := range m.Paths {
			seen[p] = true
		}
		if m.IsPlainUserText() {
			for _, p := range PathsIn(m.Body()) {
				seen[p] = true
			}
		}
	}
	var ws WorkingSet
	for _, p := range prev.Paths {
		if seen[p] {
			ws.Touch(p)
		}
	}
	return ws
}

func changed(a, b []transcript.Message) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i].Text() != b[i].Text() {
			return true
		}
	}
	return false
}

// Alerts returns the active alert lines: loop guard and compaction
// breakers. They are also in the status bar.
//
// It waits for a running turn to finish, since the breakers belong to it.
func (s *Session) Alerts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.alerts()
}

// PastRebuild is a rewrite of the current cycle's log, with the messages it
// removed or changed, for showing the whole conversation again.
type PastRebuild struct {
	Record     transcript.RebuildRecord `json:"record"`
	Superseded []transcript.Message     `json:"superseded"`
}

// History returns the rebuilds of the current cycle, oldest first, each
// with the messages it superseded. Together with Messages it is everything
// the cycle ever held.
func (h Compaction) History() ([]PastRebuild, error) {
	s := h.s
	cycleNow := s.Snapshot().Meta.Cycle // without waiting for a running turn
	var out []PastRebuild
	err := s.cfg.Store.View(func(tx *storage.Tx) error {
		recs, err := tx.Records(storage.KindRebuild, s.meta.ID)
		if err != nil {
			return err
		}
		for _, r := range recs {
			k, ok, err := transcript.ReadKept(r.Data, tx.Blob, func(rec transcript.RebuildRecord) bool { return rec.Cycle == cycleNow })
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			gone, err := k.All()
			if err != nil {
				return err
			}
			p := PastRebuild{Record: k.Record}
			for _, g := range gone {
				p.Superseded = append(p.Superseded, g.Message)
			}
			out = append(out, p)
		}
		return nil
	})
	return out, err
}
