// Package agent runs Tally's turn loop: it appends the user's text, asks the
// model, runs the tools it calls and commits every step to the store before
// the next request. It wires the other engine packages together and reports
// progress as Events; it never imports a UI toolkit.
package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tally-dev/tally/internal/serial"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tally-dev/tally/assets"
	"github.com/tally-dev/tally/engine/cmdrule"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/guard"
	"github.com/tally-dev/tally/engine/hooks"
	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/prompt"
	"github.com/tally-dev/tally/engine/rewind"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/subagent"
	"github.com/tally-dev/tally/engine/todo"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Session is one conversation bound to a workspace. Its methods are safe to
// call from several goroutines, but turns run one at a time.
//
// Which methods wait: Run, SwitchModel, Compaction().Apply and NewCycle,
// Purge(), Rewind().Apply and Files().Revert are turn-like and fail at
// once with ErrBusy while another of them runs. Snapshot never waits: it
// is the session as of its last commit, for every reader. The few readers
// and setters that need the live state (Audit().NextRequest,
// Rewind().Plan, Permissions().SetAllowNetwork, …) take the session lock
// and so wait for a running turn-like operation to finish; a brief one of
// them never makes a turn fail. Permissions()'s Mode, Rules, Revoke and
// Sandboxed never wait; its SetMode decides the next call at once and
// waits only to store the mode.
type Session struct {
	cfg Config
	// chosen is the model the session talks to (Config.ModelChoice until
	// SwitchModel replaces it), read through model(): methods that never
	// wait for a turn read it while a switch may be storing a new one.
	chosen atomic.Pointer[ModelChoice]
	mu     sync.Mutex // held for the whole of a turn
	// events hands events to Config.OnEvent one at a time (deliver).
	events serial.Line[Event]
	// working is set while a turn-like operation runs (see beginWork).
	working atomic.Bool
	// sentSinceOpen: a request was sent since the session was opened.
	sentSinceOpen bool
	// defaultRenderer: the status renderer is status.Render, whose
	// delta form the on-change placement may use.
	defaultRenderer bool
	meta            storage.Session
	st              state
	log             *transcript.AppendLog
	tools           *tool.Registry
	skills          *skill.Session // nil when the session started with no skill
	gate            *tool.Gate
	env             tool.Env
	cmds            *cmdrule.Book // run_shell's allow and deny rules

	// The request pipeline's state (see request.go and package step): the
	// prefix zone, its token count and the skeleton of the next request.
	req       step.Requester
	prefixTok int
	anchor    tokens.Anchor
	fp        prompt.Fingerprint
	turn      turnState
	checklist *todo.List
	savedList int // checklist version last saved
	// pendingList is the checklist version a commit in flight writes; it
	// becomes savedList only once that commit succeeded.
	pendingList int
	listDirty   bool // checklist changed since the last event
	guard       *guard.Guard
	subs        *subagent.Hub // the task tool's children (see subagent.go)
	forms       mcp.Forms     // the MCP servers' forms waiting for the host (see elicit.go)

	sentFP     prompt.Fingerprint // prefix of the last request sent
	sentSystem string
	booked     string               // reason for an announced prefix change, or ""
	view       atomic.Pointer[View] // as of the last commit, see Snapshot

	pendingRebuild string // the rewrite the next ledger row follows

	rw *rewrite.Session // compaction, cycles and purge (see rewrite.go)

	// turns is the user's numbered turns and the file checkpoints the
	// tools record in (see rewind.go); it records only once Create or
	// Open started it (not for a session opened with Inspect).
	turns *rewind.Session

	// mcpRun runs the session's MCP servers (see mcp.go); nil when there
	// are none. Set before Create or Open returns, never changed after.
	mcpRun *mcp.Session
	// lsp is the session's share of its workspace's language servers, nil when none is available (see lsp.go).
	lsp   *lsp.Session
	hooks *hooks.Session // the command hooks (see hooks.go); nil when opened with Inspect or with hooks off
}

// turnState is the per-turn canonical state behind the status bar.
type turnState struct {
	steps     int
	toolCalls int
	// shownList is the checklist version a tool result of this turn
	// showed the model; statusTurn says a status block was appended in
	// this turn (on-change placement).
	shownList  int
	statusTurn bool
	// halt is why the loop guard stopped the turn (its message for the
	// user), "" while it runs.
	halt string
}

// ErrBusy is returned when a turn is started while another one runs.
var ErrBusy = errors.New("a turn is already running in this session; wait for it or stop it first")

// Create starts a new session with the given ID (generated when empty) in
// workspace. The system prompt is assembled now, once: the workspace's
// AGENTS.md files are read at session start and never again.
func Create(cfg Config, id, workspace, title string) (*Session, error) {
	abs, err := CheckWorkspace(workspace, cfg.dataDir())
	if err != nil {
		return nil, err
	}
	generated := id == ""
	if generated {
		id = newID(cfg.now())
	}
	if err := ValidID(id); err != nil {
		return nil, err
	}
	roots, err := cfg.roots(abs, cfg.Roots)
	if err != nil {
		return nil, err
	}
	now := cfg.now()
	pack := prompt.LoadContextWith(abs, prompt.ContextOptions{UserDir: cfg.UserConfigDir, SecretFiles: cfg.Shell.SecretFiles})
	skillCat := discoverSkills(cfg, abs)
	pack.Skills = skillCat.Section()
	if !cfg.Subagents.Off {
		kinds, _ := subagent.Discover(cfg.UserConfigDir, abs)
		pack.Agents = subagent.Section(kinds)
	}
	text, spans := prompt.Assemble(SystemSections(abs, pack))
	if title == "" {
		title = filepath.Base(abs)
	}
	meta := storage.Session{ID: id, Title: title, Workspace: abs, Model: cfg.ModelName, Profile: cfg.Profile, Created: now, Updated: now, Cycle: 1}
	st := state{System: text, Spans: spans, Base: text, BaseSpans: spans, State: rewrite.State{CycleStarted: now}, Skills: skillCat.Names(), Roots: roots}
	err = cfg.Store.Update(func(tx *storage.Tx) error {
		// A generated ID that is taken is drawn again, inside the
		// transaction, so two sessions created at once cannot collide.
		for tries := 1; ; tries++ {
			if _, err := tx.Session(meta.ID); err != nil {
				break
			}
			if !generated || tries >= maxIDDraws {
				return fmt.Errorf("a session with ID %q already exists; open it or choose another ID", meta.ID)
			}
			meta.ID = newID(now)
		}
		if err := putMeta(tx, meta, st); err != nil {
			return err
		}
		return putPrompt(tx, meta.ID, st)
	})
	if err != nil {
		return nil, err
	}
	sess, err := load(cfg, meta, st, nil)
	if err != nil {
		return nil, err
	}
	sess.env.Recorder = sess.turns.Record()
	mcpHost{sess}.start()
	hookRunner{sess}.start("startup")
	return sess, nil
}

// Open loads a stored session. A session whose last step was interrupted
// (a crash between a tool call and its result) is repaired by appending an
// "interrupted" result for each unanswered call; nothing is rewritten.
func Open(cfg Config, id string) (*Session, error) {
	s, err := Inspect(cfg, id)
	if err != nil {
		return nil, err
	}
	if err := s.repair(); err != nil {
		return nil, err
	}
	if cfg.Roots != nil { // the folders the host named are the session's from now on
		if err := s.saveMeta(); err != nil {
			return nil, err
		}
	}
	s.env.Recorder = s.turns.Record()
	mcpHost{s}.start()
	hookRunner{s}.start("resume")
	return s, nil
}

// OpenOrCreate opens the session with ID id, or creates it in workspace when
// no such session exists.
func OpenOrCreate(cfg Config, id, workspace string) (*Session, error) {
	var exists bool
	err := cfg.Store.View(func(tx *storage.Tx) error {
		_, err := tx.Session(id)
		exists = err == nil
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if exists {
		return Open(cfg, id)
	}
	return Create(cfg, id, workspace, "")
}

func load(cfg Config, meta storage.Session, st state, recs []storage.Record) (*Session, error) {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Approver == nil {
		cfg.Approver = tool.DenyAll{}
	}
	if cfg.ModelName == "" {
		cfg.ModelName, cfg.Profile = meta.Model, meta.Profile
	}
	if cfg.StatusMode == "" {
		cfg.StatusMode = status.Tail
	}
	if cfg.ToolCallLimit <= 0 {
		cfg.ToolCallLimit = DefaultToolCallLimit
	}
	defaultRenderer := cfg.Renderer == nil
	if defaultRenderer {
		cfg.Renderer = status.Render
	}
	if cfg.Compaction == "" {
		cfg.Compaction = rewrite.Auto
	}
	if cfg.Roots != nil { // the host names the folders: they replace the stored ones
		var err error
		if st.Roots, err = cfg.roots(meta.Workspace, cfg.Roots); err != nil {
			return nil, err
		}
	} else {
		st.Roots = cfg.present(meta.Workspace, st.Roots)
	}
	s := &Session{cfg: cfg, meta: meta, st: st, defaultRenderer: defaultRenderer}
	s.chosen.Store(&cfg.ModelChoice)
	s.cfg.ModelChoice = ModelChoice{}     // one place for the model: s.model()
	s.notePin(cfg.ModelName, cfg.Profile) // opened on another model than it was left on
	s.rw = rewrite.NewSession(rewriteHost{s}, rewrite.Options{Store: cfg.Store, Mode: cfg.Compaction, Asker: cfg.Asker,
		KeepUnder: cfg.KeepUnder, CycleAt: cfg.CycleAt, NoFacts: cfg.NoCompactionFacts})
	s.subs = subagent.NewHub(parent{s}, cfg.Subagents, cfg.UserConfigDir)
	s.view.Store(&View{Meta: s.meta}) // Snapshot never reads the live fields
	s.tools = tool.NewRegistry()
	for _, t := range tool.Builtins() {
		s.tools.AddBuiltin(t)
	}
	s.checklist = loadChecklist(cfg.Store, meta.ID)
	s.savedList = s.checklist.Version()
	if !cfg.NoChecklist {
		for _, t := range todo.Tools(s.checklist) {
			s.tools.AddBuiltin(t)
		}
		for name, target := range todo.Aliases {
			s.tools.Alias(name, target)
		}
	}
	s.guard = guard.New()
	s.tools.AddBuiltin(cycle.RecallTool(func() ([]cycle.Archive, error) { return rewrite.ReadArchives(cfg.Store, meta.ID) }))
	if !cfg.Subagents.Off {
		s.tools.AddBuiltin(subagent.Tool())
	}
	if len(st.Skills) > 0 {
		s.skills = skill.NewSession(st.Skills, func() skill.Catalog { return discoverSkills(s.cfg, s.meta.Workspace) })
		s.tools.AddBuiltin(s.skills.Tool(func() []transcript.Message { return s.Snapshot().Messages() }))
	}
	if err := (Permissions{s}).setup(); err != nil {
		return nil, err
	}
	// A nil counter is tokens.Count, whose counts the log stores with the
	// messages and reuses: reopening a session counts nothing again.
	s.log = transcript.NewAppendLog(nil, wireRules(cfg.Store, cfg.Vision))
	s.env.Vision = cfg.Vision // read_file shows pictures to a model that sees them
	s.tools.AddBuiltin(tool.RetrieveToolResult(cfg.Store.LoadBlob))
	s.startLSP()
	for _, r := range recs {
		m, err := transcript.Decode(r.Data)
		if err != nil {
			return nil, fmt.Errorf("session %q message %d: %w", meta.ID, r.Seq, err)
		}
		s.log.Append(m)
	}
	s.resetPrefix()
	if a := st.Anchor; a != nil {
		s.anchor.Set(a.Billed, a.At, a.Est)
	}
	s.turns = rewind.Open(rewind.Options{Store: cfg.Store, ID: meta.ID, Workspace: meta.Workspace, Roots: st.Roots, Cycle: meta.Cycle,
		Entries: s.log.Entries(), Limits: rewind.Limits(cfg.CheckpointBytes, cfg.Shell.SecretFiles), Prepare: cfg.PrepareSnapshots})
	s.publish()
	return s, nil
}

func putMeta(tx *storage.Tx, meta storage.Session, st state) error {
	extra, err := json.Marshal(st)
	if err != nil {
		return err
	}
	meta.Extra = extra
	return tx.PutSession(meta)
}

// SystemSections returns the system prompt sections for a workspace, most
// stable first. Nothing here reads a clock or git.
func SystemSections(workspace string, pack prompt.ContextPack) []prompt.Section {
	secs := []prompt.Section{
		{Name: "constitution", Tier: prompt.Static, Text: assets.Constitution},
		{Name: "cache_discipline", Tier: prompt.Static, Text: assets.CacheDiscipline},
	}
	secs = append(secs, pack.Sections()...)
	shell := "bash"
	if runtime.GOOS == "windows" {
		shell = "cmd"
	}
	secs = append(secs, prompt.Section{Name: "environment", Tier: prompt.Session, Text: fmt.Sprintf(
		"# Environment\nworkspace: %s\nplatform: %s/%s\nshell: %s\nAll file paths in tool calls are relative to the workspace.",
		workspace, runtime.GOOS, runtime.GOARCH, shell)})
	return secs
}

func (s *Session) emit(e Event) {
	if s.cfg.OnEvent == nil {
		return
	}
	e.Session = s.meta.ID
	if e.Time.IsZero() {
		e.Time = s.cfg.now()
	}
	s.deliver(e)
}

// deliver hands e to Config.OnEvent, one event at a time whichever
// goroutine reports it (the turn, a sub-agent, an MCP watcher). No lock
// is held while OnEvent runs: an event it causes is delivered after it
// returns.
func (s *Session) deliver(e Event) {
	s.events.Send(e, s.cfg.OnEvent)
}

// commit appends msgs to the log and to the store in one write transaction,
// with the session's state, then publishes them. extra runs in the same
// transaction.
func (s *Session) commit(msgs []transcript.Message, extra func(tx *storage.Tx) error) error {
	start := s.log.Len()
	for _, m := range msgs {
		s.log.Append(m)
	}
	s.meta.Updated = s.cfg.now()
	s.meta.Model = s.model().ModelName
	if a := s.anchor; a.Valid() {
		billed, at, est := a.Parts()
		s.st.Anchor = &anchorState{billed, at, est}
	} else {
		s.st.Anchor = nil
	}
	err := s.cfg.Store.Update(func(tx *storage.Tx) error {
		for i := start; i < s.log.Len(); i++ {
			data, err := transcript.Encode(s.log.At(i).Msg)
			if err != nil {
				return err
			}
			if _, err := tx.Append(s.meta.ID, s.meta.Cycle, data); err != nil {
				return err
			}
			// Large tool results also go to the blob store, so a later
			// reference to an identical result can always be paged back.
			if m := &s.log.At(i).Msg; m.Role == transcript.Tool {
				if text := m.Text(); len(text) >= DedupeMin {
					if _, err := tx.PutBlob([]byte(text)); err != nil {
						return err
					}
				}
			}
		}
		if extra != nil {
			if err := extra(tx); err != nil {
				return err
			}
		}
		// The title may have been renamed from elsewhere; keep it.
		if cur, err := tx.Session(s.meta.ID); err == nil {
			s.meta.Title = cur.Title
		}
		return putMeta(tx, s.meta, s.st)
	})
	if err != nil {
		s.pendingList = 0 // the checklist was not saved
		// Keep memory equal to the store: drop what was not committed.
		kept := s.log.Messages()[:start]
		s.log.Rebuild("rollback after a failed commit", kept, s.cfg.now())
		s.resetPrefix()
		return fmt.Errorf("could not save the conversation: %w", err)
	}
	s.publish()
	for i := start; i < s.log.Len(); i++ {
		m := s.log.At(i).Msg.Clone() // events share no memory with the log
		s.emit(Event{Kind: EventMessage, Index: i, Message: &m})
	}
	if s.pendingList != 0 {
		s.savedList, s.pendingList, s.listDirty = s.pendingList, 0, true
	}
	if s.listDirty {
		s.listDirty = false
		items := s.checklist.Items()
		s.emit(Event{Kind: EventChecklist, Checklist: items})
	}
	return nil
}

// repair answers tool calls left without a result by a crash.
func (s *Session) repair() error {
	open := transcript.Unanswered(s.log.Messages())
	if len(open) == 0 {
		return nil
	}
	now := s.cfg.now()
	var msgs []transcript.Message
	for _, c := range open {
		m := transcript.ToolResult(c, "interrupted: Tally stopped before this call finished; its effect is unknown, so check the workspace before retrying", true, now)
		m.Kind = transcript.KindRepair
		msgs = append(msgs, m)
	}
	return s.commit(msgs, nil)
}

// Inspect opens a session read-only: no repair is appended, so the store is
// not changed. Use it to look at what the next request would be.
func Inspect(cfg Config, id string) (*Session, error) {
	var meta storage.Session
	var recs []storage.Record
	var stored []byte
	err := cfg.Store.View(func(tx *storage.Tx) error {
		var err error
		if meta, err = tx.Session(id); err != nil {
			return err
		}
		if stored, err = tx.State(id, promptKey); err != nil {
			return err
		}
		recs, err = tx.Log(id, meta.Cycle)
		return err
	})
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, fmt.Errorf("no session with ID %q; run `tally sessions` to list them", id)
		}
		return nil, err
	}
	var st state
	if len(meta.Extra) > 0 {
		if err := json.Unmarshal(meta.Extra, &st); err != nil {
			return nil, fmt.Errorf("session %q has unreadable state (%w); the store may be damaged", id, err)
		}
	}
	var ps promptState
	if err := json.Unmarshal(stored, &ps); err != nil || ps.System == "" {
		return nil, fmt.Errorf("session %q has no readable system prompt in the store; it may be damaged", id)
	}
	st.System, st.Spans, st.Base, st.BaseSpans, st.Summary, st.Carry, st.Carried = ps.System, ps.Spans, ps.Base, ps.BaseSpans, ps.Summary, ps.Carry, ps.Carried
	return load(cfg, meta, st, recs)
}
