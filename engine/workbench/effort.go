package workbench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tally-dev/tally/config"
	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/llm"
	"github.com/tally-dev/tally/storage"
)

// EffortDefault is the level that sends nothing: the provider's default.
const EffortDefault = llm.EffortDefault

// ParseEffort reads an effort level by name ("default" is the provider's).
func ParseEffort(s string) (chat.Effort, error) { return llm.ParseEffort(s) }

// EffortLevels lists the effort levels in order, the provider's default
// first.
func EffortLevels() []chat.Effort { return slices.Clone(llm.EffortLevels) }

// EffortSession names the session's own effort among the roles of
// SetEffort and Efforts; the others are RoleNamesInOrder's.
const EffortSession = "session"

// EffortChange is one recorded change of a session's effort: the role it
// applies to (EffortSession or a role) and the level from then on.
type EffortChange struct {
	Time  time.Time   `json:"time"`
	Role  string      `json:"role"`
	Level chat.Effort `json:"level"`
}

// effortRoles maps the kinds of the engine's requests (llm.Request.Role)
// to the roles whose effort they use; every other kind uses the
// session's.
var effortRoles = map[string]string{
	string(ledger.KindSubagent): config.RoleSubagents,
	string(ledger.KindSummary):  config.RoleSummaries,
	string(ledger.KindBrief):    config.RoleBriefs,
}

// effortBook holds the effort of each session and role of one store: the
// last recorded change of each, read from the store once per session. It
// is the llm.EffortSource of every model client the front door builds.
type effortBook struct {
	store  *storage.Store
	mu     sync.Mutex
	levels map[string]map[string]chat.Effort // session → role → level
}

// books holds the effort book of each open store, shared by its
// Workbench and every view borrowed from it.
var books sync.Map

// efforts is the effort book of w's store.
func (w *Workbench) efforts() *effortBook {
	b, _ := books.LoadOrStore(w.store, &effortBook{store: w.store})
	return b.(*effortBook)
}

// Effort implements llm.EffortSource: the role's own level, else the
// session's, else the provider's default.
func (b *effortBook) Effort(session, kind string) chat.Effort {
	b.mu.Lock()
	levels := b.load(session)
	e, ok := levels[effortRoles[kind]]
	if !ok || effortRoles[kind] == "" {
		e, ok = levels[EffortSession]
	}
	b.mu.Unlock()
	if ok {
		return e
	}
	return EffortDefault
}

// forget drops what was read of session id (deleted: a new session of
// the same ID starts afresh).
func (b *effortBook) forget(id string) {
	b.mu.Lock()
	delete(b.levels, id)
	b.mu.Unlock()
}

// load returns the levels recorded for session id, read from the store
// once; the caller holds b.mu.
func (b *effortBook) load(id string) map[string]chat.Effort {
	if l, ok := b.levels[id]; ok || id == "" {
		return l
	}
	l := map[string]chat.Effort{}
	if recs, err := b.store.Records(storage.KindEffort, id); err == nil {
		for _, r := range recs {
			var c EffortChange
			if json.Unmarshal(r.Data, &c) == nil {
				l[c.Role] = c.Level
			}
		}
	}
	if b.levels == nil {
		b.levels = map[string]map[string]chat.Effort{}
	}
	b.levels[id] = l
	return l
}

// Efforts returns the effort of session id and of each role as its next
// request will send it: EffortSession's, then each role's (the session's
// when the role has none of its own).
func (w *Workbench) Efforts(id string) map[string]chat.Effort {
	b := w.efforts()
	out := map[string]chat.Effort{EffortSession: b.Effort(id, "")}
	for kind, role := range effortRoles {
		out[role] = b.Effort(id, kind)
	}
	return out
}

// EffortHistory returns the recorded changes of session id's effort,
// oldest first.
func (w *Workbench) EffortHistory(id string) ([]EffortChange, error) {
	recs, err := w.store.Records(storage.KindEffort, id)
	if err != nil {
		return nil, err
	}
	out := make([]EffortChange, 0, len(recs))
	for _, r := range recs {
		var c EffortChange
		if json.Unmarshal(r.Data, &c) == nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// SetEffort sets the effort of session id's role (EffortSession for the
// session's own) from its next request on, and records the change in the
// session's store, so a reopened session keeps it and the history shows
// when it changed; nothing already sent changes. Setting the level a role
// already has records nothing.
func (w *Workbench) SetEffort(id, role string, level chat.Effort) error {
	role = strings.TrimSpace(role)
	if role == "" {
		role = EffortSession
	}
	if role != EffortSession && !slices.Contains(config.RoleNames, role) {
		return fmt.Errorf("%q is not a role of the effort; use session, %s", role, strings.Join(config.RoleNames, ", "))
	}
	if _, err := llm.ParseEffort(string(level)); err != nil {
		return err
	}
	if id == "" {
		return fmt.Errorf("no session is open to set the effort of; open or start one first")
	}
	b := w.efforts()
	b.mu.Lock()
	defer b.mu.Unlock()
	levels := b.load(id)
	if cur, ok := levels[role]; ok && cur == level {
		return nil
	}
	data, _ := json.Marshal(EffortChange{Time: time.Now().UTC(), Role: role, Level: level})
	if err := w.store.Update(func(tx *storage.Tx) error {
		_, err := tx.AddRecord(storage.KindEffort, id, data)
		return err
	}); err != nil {
		return fmt.Errorf("the effort could not be recorded, so it is unchanged (%w)", err)
	}
	levels[role] = level
	return nil
}

// EffortLine names the session's effort and each role's that differs
// from it, for a footer or a terminal: "high (summaries off)", or
// "default" when nothing is set.
func EffortLine(e map[string]chat.Effort) string {
	var roles []string
	for _, r := range config.RoleNames {
		if e[r] != e[EffortSession] {
			roles = append(roles, r+" "+e[r].String())
		}
	}
	s := e[EffortSession].String()
	if len(roles) > 0 {
		s += " (" + strings.Join(roles, ", ") + ")"
	}
	return s
}
