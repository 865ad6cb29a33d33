// Package fleet is the window's fleet view: one place that lists every
// session whose turn runs, waits for the user, or ended while the app was
// open, with its state (running step n, needs approval, failed, done), its
// workspace and branch, its context level, its cost so far and its last
// line; a click opens it. A prompt can be queued for a busy session: it is
// sent when the running turn ends, and can be cancelled until then.
//
// The view never polls. The window feeds it the engine's events of every
// session (shown or in the background) as they arrive, tells it when a
// session starts or stops waiting for the user and when a turn ends; the
// few facts events do not carry (title, branch, the ledger's rows) are
// read through the front door off the UI goroutine, through the Host's
// Work, once when a turn starts and once when it ends. Costs are priced by
// ledger.Sum, as the footer prices them. Like every Fyne widget, the view
// is used on the UI goroutine only; it starts no goroutine and never calls
// fyne.Do.
package fleet

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// State is where a listed session stands.
type State int

// The states, in the order the view lists them: what needs the user first.
const (
	Waiting State = iota // a turn waits for the user: an approval, a compaction question, a form
	Running              // a turn runs
	Failed               // the last turn failed (or the loop guard halted it)
	Stopped              // the last turn was stopped by the user
	Done                 // the last turn finished
)

// String is the state's word: "needs you", "running", "failed",
// "stopped" or "done" (a row says more through Entry.StateText).
func (s State) String() string {
	return [...]string{"needs you", "running", "failed", "stopped", "done"}[s]
}

// Entry is one listed session, as the view shows it. All of it comes from
// the engine's events and the front door; nothing is estimated here.
type Entry struct {
	ID, Title string
	Workspace string
	Branch    string // the session's worktree branch, or its folder's checkout's; "" for no checkout
	State     State
	Waits     string // what a waiting session asks for: "needs approval", "needs an answer"
	Step      int    // the running turn's step (its latest request)
	MaxSteps  int
	Level     int // tokens in context, as the last usage event or rewrite left it
	Window    int
	Rows      []ledger.Row // the session's ledger rows, for its cost so far
	Last      string       // the session's last line: a message's first line or the tool call running
	Call      string       // the tool call started last (tool.Summarize), which an approval is about
	Err       string       // why the last turn failed
	Queued    string       // a prompt to send when the turn ends; "" for none
	Changed   time.Time    // the last event
}

// Facts is what the front door says of a session beyond its events.
type Facts struct {
	Title, Workspace, Branch string
	Level, Window            int
	Rows                     []ledger.Row
	RowsOK                   bool // Rows were read (a failed read keeps the rows the events brought)
}

// ReadFacts reads session id's facts through the front door: its title,
// workspace, level and window from sess's published view (which never
// waits for a turn), its branch from wb (its worktree's, or its folder's
// checkout's) and its ledger rows from sess.
// It reads the store, so it runs off the UI goroutine. A nil wb or sess
// leaves their parts empty.
func ReadFacts(wb *workbench.Workbench, sess *agent.Session, id string) Facts {
	var f Facts
	if sess != nil {
		v := sess.Snapshot()
		f.Title, f.Workspace, f.Level, f.Window = v.Meta.Title, v.Meta.Workspace, v.Level, v.Window
		rows, err := sess.Audit().Ledger()
		f.Rows, f.RowsOK = rows, err == nil
	}
	if wb != nil {
		if t, ok, err := wb.Worktree(id); err == nil && ok {
			f.Branch = t.Branch
		} else if f.Workspace != "" {
			f.Branch = wb.Branch(f.Workspace) // a session in its folder: the folder's checkout
		}
	}
	return f
}

// Reader returns a Host.Read over the front door wb (see ReadFacts).
func Reader(wb *workbench.Workbench) func(id string, sess *agent.Session) Facts {
	return func(id string, sess *agent.Session) Facts { return ReadFacts(wb, sess, id) }
}

// apply takes an event of e's session into the entry; it reports whether
// anything the row shows changed.
func (en *Entry) apply(e agent.Event) bool {
	switch e.Kind {
	case agent.EventTurnStart:
		en.State, en.Step, en.Err, en.Waits = Running, max(e.Step, 1), "", ""
	case agent.EventMessage:
		if e.Message == nil {
			return false
		}
		line := lastLine(*e.Message)
		if line == "" {
			return false
		}
		en.Last = line
	case agent.EventToolStart:
		if e.Call == nil {
			return false
		}
		en.Call = tool.Summarize(e.Call.Name, []byte(e.Call.Arguments))
		en.Last = "running " + en.Call
		en.Step = max(en.Step, e.Step)
	case agent.EventUsage:
		if e.Usage == nil {
			return false
		}
		en.Rows = append(en.Rows, e.Usage.Row)
		if !e.Usage.WarmUp {
			en.Level, en.Window = e.Usage.Row.ContextTokens, e.Usage.Window
			en.Step = max(en.Step, e.Step)
		}
	case agent.EventRebuild:
		if e.Rebuild == nil {
			return false
		}
		en.Level = e.Rebuild.TokensAfter
	default:
		return false
	}
	en.Changed = e.Time
	return true
}

// lastLine is the line a message leaves in its session's row: your
// prompt, the answer's first line or the calls it makes; "" for a message
// that says nothing to a person (a tool result, the engine's own).
func lastLine(m transcript.Message) string {
	if m.Kind != transcript.KindChat {
		return ""
	}
	switch m.Role {
	case transcript.User:
		if s := text.FirstLine(m.Body(), 200); s != "" {
			return "You: " + s
		}
	case transcript.Assistant:
		if s := plain(text.FirstLine(m.Body(), 200)); s != "" {
			return s
		}
		if len(m.ToolCalls) > 0 {
			names := make([]string, len(m.ToolCalls))
			for i, c := range m.ToolCalls {
				names[i] = c.Name
			}
			return "calls " + strings.Join(names, ", ")
		}
	}
	return ""
}

// plain is a line of Markdown without its marks: a heading's or quote's
// leading signs, bold and code marks.
func plain(s string) string {
	return markMarks.Replace(strings.TrimLeft(s, "#> "))
}

// markMarks removes bold and code marks.
var markMarks = strings.NewReplacer("**", "", "`", "")

// ended takes the end of a turn into the entry: its state and why it
// failed. cancelled is a Stop; err the turn's error.
func (en *Entry) ended(reason string, err error) {
	en.Waits = ""
	switch {
	case reason == step.ReasonCancelled:
		en.State = Stopped
	case err != nil:
		en.State, en.Err = Failed, text.OneLine(err.Error(), 300)
	case reason == step.ReasonHalted:
		en.State, en.Err = Failed, "the loop guard stopped the turn"
	default:
		en.State = Done
	}
}

// take puts facts read from the front door into the entry.
func (en *Entry) take(f Facts) {
	if f.Title != "" {
		en.Title = f.Title
	}
	if f.Workspace != "" {
		en.Workspace = f.Workspace
	}
	en.Branch = f.Branch
	if f.Window > 0 && en.Window == 0 {
		en.Level, en.Window = f.Level, f.Window
	}
	if f.RowsOK {
		en.Rows = f.Rows
	}
}

// StateText is the row's state: "running · step 3/50", "needs approval",
// "failed", "done".
func (en *Entry) StateText() string {
	switch en.State {
	case Running:
		if en.MaxSteps > 0 {
			return fmt.Sprintf("running · step %d/%d", max(en.Step, 1), en.MaxSteps)
		}
		return fmt.Sprintf("running · step %d", max(en.Step, 1))
	case Waiting:
		if en.Waits != "" {
			return en.Waits
		}
	}
	return en.State.String()
}

// Detail is the row's second line: workspace, branch and context level.
func (en *Entry) Detail() string {
	parts := []string{tildePath(en.Workspace)}
	if en.Branch != "" {
		parts = append(parts, "branch "+en.Branch)
	}
	switch {
	case en.Window > 0:
		parts = append(parts, fmt.Sprintf("context %s / %s (%.0f %%)", tw.TokensShort(en.Level), tw.TokensShort(en.Window),
			100*float64(en.Level)/float64(en.Window)))
	case en.Level > 0:
		parts = append(parts, "context "+tw.TokensShort(en.Level))
	}
	return strings.Join(parts, " · ")
}

// Cost is what the session cost so far at prices: "$0.0123", or "n/a"
// while a model of its rows has no price (never "$0" for unknown).
func (en *Entry) Cost(prices ledger.PriceBook) string {
	if prices == nil {
		return "cost n/a"
	}
	t := ledger.Sum(en.Rows, prices)
	if !t.Priced {
		return "cost n/a"
	}
	return tw.Dollars(t.Cost)
}

// LastText is the row's third line: why the turn failed, the call an
// approval is asked for, or the last line.
func (en *Entry) LastText() string {
	switch {
	case en.State == Failed && en.Err != "":
		return "Failed: " + en.Err
	case en.State == Waiting && en.Waits == "needs approval" && en.Call != "":
		return "Asks to run " + en.Call
	}
	if en.Last == "" {
		return "—"
	}
	return en.Last
}

// busy reports whether a turn of the session runs (waiting included).
func (en *Entry) busy() bool { return en.State == Running || en.State == Waiting }

// sortEntries orders the entries as the view lists them: by state (what
// needs the user first), then the latest activity first.
func sortEntries(list []*Entry) {
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].State != list[j].State {
			return list[i].State < list[j].State
		}
		return list[i].Changed.After(list[j].Changed)
	})
}

// tildePath shortens the home folder to "~".
func tildePath(p string) string {
	if home := homeDir(); home != "" && (p == home || strings.HasPrefix(p, home+"/")) {
		return "~" + strings.TrimPrefix(p, home)
	}
	return p
}
