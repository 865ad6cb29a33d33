package subagent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Sub-agents are stored under their parent session, so they are deleted
// with it and never appear as sessions of their own: the state key
// childIndexKey holds the list of Info, and each child's transcript
// is one state value per message, "subagent/<id>/<n>", written as the
// message is committed (append-only, like a session's log).
const childIndexKey = "subagents"

func childMsgKey(id string, n int) string { return fmt.Sprintf("subagent/%s/%06d", id, n) }

// readChildIndex returns the stored sub-agents of a session, oldest first.
func readChildIndex(st *storage.Store, session string) ([]Info, error) {
	var out []Info
	err := st.View(func(tx *storage.Tx) error {
		var err error
		out, err = childIndex(tx, session)
		return err
	})
	return out, err
}

func childIndex(tx *storage.Tx, session string) ([]Info, error) {
	data, err := tx.State(session, childIndexKey)
	if err != nil || len(data) == 0 {
		return nil, err
	}
	var out []Info
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("the sub-agent list of session %q is unreadable (%w); the store may be damaged", session, err)
	}
	return out, nil
}

// putChild replaces or appends info in the session's index.
func putChild(tx *storage.Tx, session string, info Info) error {
	all, err := childIndex(tx, session)
	if err != nil {
		return err
	}
	found := false
	for i := range all {
		if all[i].ID == info.ID {
			all[i], found = info, true
		}
	}
	if !found {
		all = append(all, info)
	}
	data, err := json.Marshal(all)
	if err != nil {
		return err
	}
	return tx.PutState(session, childIndexKey, data)
}

// readChildLog returns a child's stored transcript.
func readChildLog(st *storage.Store, session, id string) ([]transcript.Message, error) {
	var out []transcript.Message
	err := st.View(func(tx *storage.Tx) error {
		for n := 0; ; n++ {
			data, err := tx.State(session, childMsgKey(id, n))
			if err != nil {
				return err
			}
			if data == nil {
				return nil
			}
			m, err := transcript.Decode(data)
			if err != nil {
				return fmt.Errorf("sub-agent %q message %d: %w", id, n, err)
			}
			out = append(out, m)
		}
	})
	return out, err
}

// nextChildID numbers the session's next child.
func (h *Hub) nextChildID() (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.next == 0 {
		all, err := readChildIndex(h.p.Store(), h.p.ID())
		if err != nil {
			return "", err
		}
		h.next = len(all)
	}
	h.next++
	return fmt.Sprintf("sub-%d", h.next), nil
}

// saveChild stores a child's info in the index.
func (h *Hub) saveChild(info Info) error {
	return h.p.Store().Update(func(tx *storage.Tx) error { return putChild(tx, h.p.ID(), info) })
}

// start stores the child in the index with its first message.
func (c *child) start(job transcript.Message) error {
	c.log.Append(job)
	c.stored = 1
	info := c.update(func(i *Info) { i.Messages = c.stored })
	return c.p.Store().Update(func(tx *storage.Tx) error {
		if err := putChild(tx, c.parent, info); err != nil {
			return err
		}
		return c.putMessage(tx, 0, &c.log.At(0).Msg)
	})
}

// commit appends m to the child's log and stores it, with the ledger row
// of the request that produced it when row is not nil, in one transaction,
// then reports it.
func (c *child) commit(m transcript.Message, row *ledger.Row) error {
	c.log.Append(m)
	n, msg := c.stored, &c.log.At(c.log.Len()-1).Msg // its place in the stored transcript
	info := c.update(func(i *Info) { i.Messages = n + 1 })
	err := c.p.Store().Update(func(tx *storage.Tx) error {
		if err := c.putMessage(tx, n, msg); err != nil {
			return err
		}
		if row == nil {
			return nil
		}
		return c.p.AddRow(tx, *row)
	})
	if err != nil {
		return fmt.Errorf("could not save sub-agent %s's transcript: %w", c.info.ID, err)
	}
	c.stored++
	c.emit(UpdateMessage, info, func(u *Update) { m := msg.Clone(); u.Message, u.Index = &m, n })
	return nil
}

// putMessage stores m as message n of the child's stored transcript; a
// large tool result also goes to the blob store, so a reference to it can
// be paged back.
func (c *child) putMessage(tx *storage.Tx, n int, m *transcript.Message) error {
	data, err := transcript.Encode(*m)
	if err != nil {
		return err
	}
	if m.Role == transcript.Tool {
		if text := m.Text(); c.dedupeMin > 0 && len(text) >= c.dedupeMin {
			if _, err := tx.PutBlob([]byte(text)); err != nil {
				return err
			}
		}
	}
	return tx.PutState(c.parent, childMsgKey(c.info.ID, n), data)
}

// childLine describes a child in one line for the carry-over: its ID,
// title, kind, outcome, the start of its report and where the whole report
// can be paged back.
func childLine(c Info) string {
	line := fmt.Sprintf("- %s %q (%s): %s, %d steps, %d files read", c.ID, transcript.NeutralizeLine(c.Title), c.Kind, c.Status, c.Steps, c.FilesRead)
	if c.ReportHead != "" {
		line += fmt.Sprintf("; report begins %q", transcript.NeutralizeLine(c.ReportHead))
	}
	if c.ReportSHA != "" {
		line += "; whole report: retrieve_tool_result sha " + c.ReportSHA
	}
	return line
}

// CycleLines lists, for a new cycle's seed, the children of the cycle
// that ends (at most MaxCarriedChildren, the latest).
func (h *Hub) CycleLines() []string {
	if h.cfg.Off {
		return nil
	}
	all, err := h.List()
	if err != nil {
		return nil
	}
	var lines []string
	for _, c := range all {
		if c.Cycle == h.p.Cycle() {
			lines = append(lines, childLine(c))
		}
	}
	if len(lines) > MaxCarriedChildren {
		lines = lines[len(lines)-MaxCarriedChildren:]
	}
	return lines
}

// MaxCarriedChildren is how many sub-agents one carry-over reminder lists.
const MaxCarriedChildren = 8

// CarryOver is the reminder a rebuild of the parent's log (a compaction,
// an emergency truncation or a new cycle, named by why) needs when the
// reports of sub-agents of this or the previous cycle are no longer in
// log: one <system-reminder> listing them, with where the whole report
// can be paged back, so the model does not delegate the same job again.
// It is "" when none is missing.
func (h *Hub) CarryOver(log *transcript.AppendLog, why string) (string, error) {
	if h.cfg.Off {
		return "", nil
	}
	all, err := h.List()
	if err != nil || len(all) == 0 {
		return "", err
	}
	inLog := map[string]bool{}
	var carried strings.Builder // reminders and the cycle seed, which list children already
	for i := range log.Len() {
		m := &log.At(i).Msg
		if m.Role == transcript.Tool && m.ToolName == TaskToolName {
			inLog[m.ToolCallID] = strings.Contains(m.Text(), "[sub-agent ")
		}
		if m.Kind == transcript.KindReminder || m.Kind == transcript.KindSeed {
			carried.WriteString(m.Text())
		}
	}
	var lines []string
	for _, c := range all {
		if c.Cycle < h.p.Cycle()-1 || inLog[c.CallID] || strings.Contains(carried.String(), "- "+c.ID+" ") {
			continue
		}
		lines = append(lines, childLine(c))
	}
	if len(lines) == 0 {
		return "", nil
	}
	if len(lines) > MaxCarriedChildren {
		lines = lines[len(lines)-MaxCarriedChildren:]
	}
	return "<system-reminder>\nSub-agents whose reports are no longer in the conversation (" + why +
		"); do not delegate these jobs again unless something changed:\n" + strings.Join(lines, "\n") + "\n</system-reminder>", nil
}
