package workbench

import (
	"errors"
	"fmt"
	"sync"

	"github.com/tally-dev/tally/engine/agent"
)

// ErrInUse is matched by the error of opening a session for turns while
// another holder in this process has it open: the app's window and an
// editor connected through the app (tally acp) never run one session at
// once.
var ErrInUse = errors.New("the session is open elsewhere in this Tally")

// Holder says who opens sessions through a borrowed Workbench, for the
// error another holder gets: "session … is open in Where; Free".
type Holder struct {
	Where string // "an editor connected with tally acp"
	Free  string // what frees the session: "close it in the editor and try again"
}

// appHolder is the holder of the Workbench that opened the store.
var appHolder = Holder{Where: "the Tally app", Free: "open another session in the app, once its turn has ended, and try again"}

// holder is who opens sessions through a Workbench: the workbench that
// opened the store, or one borrowed view (see Borrow). Sessions one
// holder opens several times (the app's window reopening a session) are
// its own affair.
type holder struct{ Holder }

// inUse is the error of a session another holder has open.
type inUse struct {
	id string
	by Holder
}

func (e inUse) Error() string {
	return fmt.Sprintf("session %s is open in %s; %s", e.id, e.by.Where, e.by.Free)
}

func (e inUse) Unwrap() error { return ErrInUse }

// sessionHolders records which holder has each session open for turns.
// The workbench that opened the store and every view borrowed from it
// share one.
type sessionHolders struct {
	mu   sync.Mutex
	open map[string]*holding
}

type holding struct {
	by *holder
	n  int // opens not closed yet
}

// claim is one open of a session, released once when the session
// closes.
type claim struct {
	w    *Workbench
	mu   sync.Mutex
	id   string
	done bool
}

// newClaim returns a claim for the next session w opens and cfg with the
// claim's release added to its OnClose.
func (w *Workbench) newClaim(cfg agent.Config) (*claim, agent.Config) {
	c := &claim{w: w}
	prev := cfg.OnClose
	cfg.OnClose = func() {
		c.release()
		if prev != nil {
			prev()
		}
	}
	return c, cfg
}

// take claims session id, or fails with an error matching ErrInUse that
// says who has it open.
func (c *claim) take(id string) error {
	h := c.w.holders
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur := h.open[id]; cur != nil && cur.by != c.w.holder {
		return inUse{id: id, by: cur.by.Holder}
	}
	if h.open[id] == nil {
		h.open[id] = &holding{by: c.w.holder}
	}
	h.open[id].n++
	c.mu.Lock()
	c.id = id
	c.mu.Unlock()
	return nil
}

// release gives the claim back; only its first call counts.
func (c *claim) release() {
	c.mu.Lock()
	id, done := c.id, c.done
	c.done = true
	c.mu.Unlock()
	if done || id == "" {
		return
	}
	h := c.w.holders
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur := h.open[id]; cur != nil {
		if cur.n--; cur.n <= 0 {
			delete(h.open, id)
		}
	}
}
