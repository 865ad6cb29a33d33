// Package todo holds the task checklist an agent keeps for one session and
// the tools the model uses to read and change it.
//
// A [List] is the single source of truth; the tools returned by [Tools] are
// views onto it, and every tool result is a fresh [Snapshot] of the whole
// list, so the model always sees the current state right after it acts.
//
// The list keeps one invariant on every entrance, including [List.Write],
// [List.Add], [List.Update] and decoding a stored list: at most one item is
// in progress at a time. Marking an item in progress moves any other item
// that was in progress back to pending, so the checklist always tells one
// linear story.
//
// A List is safe for concurrent use: the engine may run the tools while the
// user interface reads [List.Items] or [List.Snapshot].
package todo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/tally-dev/tally/internal/text"
)

// Status is the state of one checklist item.
type Status string

// The three statuses an item can have.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
)

// Valid reports whether s is one of [Pending], [InProgress] or [Completed].
// The empty status is not valid; the entrances that accept it treat it as
// "pending" or "unchanged" and say so.
func (s Status) Valid() bool {
	return s == Pending || s == InProgress || s == Completed
}

// Item is one checklist entry. IDs are unique within a list.
type Item struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  Status `json:"status"`
}

// List is a session's checklist. The zero value is an empty list ready to
// use, but [New] is the usual way to get one. All methods are safe for
// concurrent use, and every method that returns items returns copies.
type List struct {
	mu      sync.Mutex
	items   []Item
	version int
}

// New returns an empty list at version 0.
func New() *List { return &List{} }

// maxSummaryContent is the number of runes of the in-progress item's content
// shown in the one-line summary.
const maxSummaryContent = 80

// Write replaces the whole list with items, in order.
//
// Items without an ID get the next integer after the highest numeric ID in
// the new list ("1", "2", ... for a list without IDs); an empty status means
// pending. Duplicate IDs, empty content and unknown statuses are rejected
// with an error naming the value, and the list is left unchanged. When
// several items are in progress, the last one stays in progress and the
// others become pending. Writing an empty slice clears the list.
func (l *List) Write(items []Item) error {
	_, err := l.write(items)
	return err
}

// write is Write returning notes about items that were moved back to
// pending.
func (l *List) write(items []Item) ([]string, error) {
	next, err := normalize(items)
	if err != nil {
		return nil, err
	}
	notes := singleInProgress(next, -1)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = next
	l.version++
	return notes, nil
}

// Add appends a new item and returns it. An empty status means pending. The
// new item's ID is the next integer after the highest numeric ID in the
// list. Adding an item in progress moves any other in-progress item back to
// pending.
func (l *List) Add(content string, status Status) (Item, error) {
	it, _, err := l.add(content, status)
	return it, err
}

func (l *List) add(content string, status Status) (Item, []string, error) {
	content = strings.TrimSpace(content)
	if status == "" {
		status = Pending
	}
	if content == "" {
		return Item{}, nil, errors.New("content is empty; describe the item in a few words")
	}
	if !status.Valid() {
		return Item{}, nil, fmt.Errorf("invalid status %q for item %q; use pending, in_progress or completed", status, text.Clip(content, maxSummaryContent))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	it := Item{ID: strconv.Itoa(maxNumericID(l.items) + 1), Content: content, Status: status}
	l.items = append(l.items, it)
	var notes []string
	if status == InProgress {
		notes = singleInProgress(l.items, len(l.items)-1)
	}
	l.version++
	return it, notes, nil
}

// Update changes the status, the content or both of the item with the given
// ID and returns the updated item. An empty status or content leaves that
// field unchanged; passing neither is an error. An unknown ID is an error
// listing the valid IDs. Setting an item in progress moves any other
// in-progress item back to pending. On error the list is left unchanged.
func (l *List) Update(id string, status Status, content string) (Item, error) {
	it, _, err := l.update(id, status, content)
	return it, err
}

func (l *List) update(id string, status Status, content string) (Item, []string, error) {
	id = strings.TrimSpace(id)
	l.mu.Lock()
	defer l.mu.Unlock()
	if id == "" {
		return Item{}, nil, fmt.Errorf("id is missing; pass the id of the item to change (%s)", idChoices(l.items))
	}
	i := indexOf(l.items, id)
	if i < 0 {
		return Item{}, nil, fmt.Errorf("no item has id %q; %s", id, idChoices(l.items))
	}
	if status == "" && content == "" {
		return Item{}, nil, fmt.Errorf("nothing to change for item %q; pass a new status, new content or both", id)
	}
	if status != "" && !status.Valid() {
		return Item{}, nil, fmt.Errorf("invalid status %q for item %q; use pending, in_progress or completed", status, id)
	}
	if content != "" {
		content = strings.TrimSpace(content)
		if content == "" {
			return Item{}, nil, fmt.Errorf("new content for item %q is blank; pass some text or leave content out", id)
		}
		l.items[i].Content = content
	}
	var notes []string
	if status != "" {
		l.items[i].Status = status
		if status == InProgress {
			notes = singleInProgress(l.items, i)
		}
	}
	l.version++
	return l.items[i], notes, nil
}

// Items returns a copy of the items in order. It never returns nil.
func (l *List) Items() []Item {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Item{}, l.items...)
}

// Version returns a counter that starts at 0 and grows with every successful
// Write, Add, Update or decode, so a caller can tell whether the list changed
// since it last looked. Failed calls leave it unchanged.
func (l *List) Version() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.version
}

// Open returns copies of the items that are not completed, in order. It
// never returns nil.
func (l *List) Open() []Item {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []Item{}
	for _, it := range l.items {
		if it.Status != Completed {
			out = append(out, it)
		}
	}
	return out
}

// InProgress returns the item in progress, if there is one. There is never
// more than one.
func (l *List) InProgress() (Item, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, it := range l.items {
		if it.Status == InProgress {
			return it, true
		}
	}
	return Item{}, false
}

// Snapshot is the state of a list at one moment, as shown to the model.
type Snapshot struct {
	// Summary is one line, such as
	// `checklist: 5 items, 2 done (40%), in progress: #3 "Run the tests"`.
	Summary string
	// Items is a copy of the items in order; never nil.
	Items []Item
	// CompletionPct is the share of completed items, rounded down; 0 for an
	// empty list.
	CompletionPct int
	// InProgressID is the ID of the item in progress, or "" when none is.
	InProgressID string
}

// Snapshot returns the current state of the list.
func (l *List) Snapshot() Snapshot {
	l.mu.Lock()
	items := append([]Item{}, l.items...)
	l.mu.Unlock()
	return snapshotOf(items)
}

func snapshotOf(items []Item) Snapshot {
	s := Snapshot{Items: items}
	done := 0
	var cur *Item
	for i := range items {
		switch items[i].Status {
		case Completed:
			done++
		case InProgress:
			cur = &items[i]
		}
	}
	if len(items) > 0 {
		s.CompletionPct = done * 100 / len(items)
	}
	s.Summary = fmt.Sprintf("checklist: %s, %d done (%d%%), ", text.Plural(len(items), "item"), done, s.CompletionPct)
	if cur != nil {
		s.InProgressID = cur.ID
		s.Summary += fmt.Sprintf("in progress: #%s %q", text.OneLine(cur.ID, 20), text.Clip(cur.Content, maxSummaryContent))
	} else {
		s.Summary += "nothing in progress"
	}
	return s
}

// snapshotJSON is the model-facing JSON form of a Snapshot.
type snapshotJSON struct {
	Items         []Item  `json:"items"`
	CompletionPct int     `json:"completion_pct"`
	InProgressID  *string `json:"in_progress_id"`
}

// JSON renders the snapshot as one compact line of JSON:
// {"items":[...],"completion_pct":40,"in_progress_id":"3"}, with
// in_progress_id null when nothing is in progress. The output depends only
// on the snapshot, so equal snapshots render to equal bytes.
func (s Snapshot) JSON() string {
	v := snapshotJSON{Items: s.Items, CompletionPct: s.CompletionPct}
	if v.Items == nil {
		v.Items = []Item{}
	}
	if s.InProgressID != "" {
		id := s.InProgressID
		v.InProgressID = &id
	}
	return encode(v)
}

// String returns the summary line, a blank line and the JSON: the form
// every checklist tool returns to the model.
func (s Snapshot) String() string {
	return s.Summary + "\n\n" + s.JSON()
}

// stored is the persisted form of a List.
type stored struct {
	Version int    `json:"version"`
	Items   []Item `json:"items"`
}

// MarshalJSON encodes the list for storage as
// {"version":N,"items":[...]}. It never fails.
func (l *List) MarshalJSON() ([]byte, error) {
	l.mu.Lock()
	v := stored{Version: l.version, Items: append([]Item{}, l.items...)}
	l.mu.Unlock()
	return []byte(encode(v)), nil
}

// UnmarshalJSON replaces the list with a stored one written by
// [List.MarshalJSON]; the JSON of a [Snapshot] is accepted too, and unknown
// fields are ignored. A stored list that breaks the single-in-progress rule
// is repaired rather than refused: the last in-progress item stays in
// progress and the others become pending. Missing IDs and statuses are
// filled in as [List.Write] does. Duplicate IDs, empty content or unknown
// statuses are errors, and the list is then left unchanged. Afterwards
// Version is the stored version, or one more than before if that is higher.
func (l *List) UnmarshalJSON(data []byte) error {
	var v stored
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("stored checklist is not valid JSON (%w); discard it or start a new list", err)
	}
	items, err := normalize(v.Items)
	if err != nil {
		return fmt.Errorf("stored checklist is invalid: %w", err)
	}
	singleInProgress(items, -1)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = items
	l.version = max(v.Version, l.version+1)
	return nil
}

// Decode returns a new list decoded from data as [List.UnmarshalJSON] does.
func Decode(data []byte) (*List, error) {
	l := New()
	if err := l.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return l, nil
}

// normalize validates items for a whole-list write and returns a copy with
// trimmed fields, IDs assigned and empty statuses set to pending.
func normalize(items []Item) ([]Item, error) {
	out := make([]Item, len(items))
	seen := make(map[string]int, len(items))
	for i, it := range items {
		it.ID = strings.TrimSpace(it.ID)
		it.Content = strings.TrimSpace(it.Content)
		if it.Content == "" {
			if it.ID != "" {
				return nil, fmt.Errorf("item %d (id %q) has empty content; describe every item in a few words", i+1, it.ID)
			}
			return nil, fmt.Errorf("item %d has empty content; describe every item in a few words", i+1)
		}
		if it.Status == "" {
			it.Status = Pending
		}
		if !it.Status.Valid() {
			return nil, fmt.Errorf("invalid status %q for item %q; use pending, in_progress or completed", it.Status, text.Clip(it.Content, maxSummaryContent))
		}
		if it.ID != "" {
			if j, dup := seen[it.ID]; dup {
				return nil, fmt.Errorf("duplicate id %q on items %d and %d; give each item its own id or leave the ids out", it.ID, j+1, i+1)
			}
			seen[it.ID] = i
		}
		out[i] = it
	}
	next := maxNumericID(out)
	for i := range out {
		if out[i].ID == "" {
			next++
			out[i].ID = strconv.Itoa(next)
		}
	}
	return out, nil
}

// singleInProgress enforces the invariant on items in place. keep is the
// index of the item that stays in progress; -1 means the last in-progress
// item. It returns one note per item moved back to pending.
func singleInProgress(items []Item, keep int) []string {
	if keep < 0 {
		for i := len(items) - 1; i >= 0; i-- {
			if items[i].Status == InProgress {
				keep = i
				break
			}
		}
		if keep < 0 {
			return nil
		}
	}
	var notes []string
	for i := range items {
		if i != keep && items[i].Status == InProgress {
			items[i].Status = Pending
			notes = append(notes, fmt.Sprintf("note: item #%s %q was moved back to pending because only one item can be in progress and #%s is now in progress.",
				text.OneLine(items[i].ID, 20), text.Clip(items[i].Content, maxSummaryContent), text.OneLine(items[keep].ID, 20)))
		}
	}
	return notes
}

// maxNumericID returns the highest ID that is a positive decimal integer, or
// 0 when there is none.
func maxNumericID(items []Item) int {
	m := 0
	for _, it := range items {
		if n, err := strconv.Atoi(it.ID); err == nil && n > m && n < 1<<40 {
			m = n
		}
	}
	return m
}

func indexOf(items []Item, id string) int {
	for i, it := range items {
		if it.ID == id {
			return i
		}
	}
	return -1
}

// idChoices describes the valid IDs for an error message.
func idChoices(items []Item) string {
	if len(items) == 0 {
		return "the checklist is empty, so add items with checklist_add or checklist_write first"
	}
	const show = 20
	ids := make([]string, 0, min(len(items), show))
	for i, it := range items {
		if i == show {
			break
		}
		ids = append(ids, text.OneLine(it.ID, 20))
	}
	s := "valid ids are " + strings.Join(ids, ", ")
	if len(items) > show {
		s += fmt.Sprintf(" and %d more (see checklist_list)", len(items)-show)
	}
	return s
}

// encode marshals v compactly without escaping <, > and &.
func encode(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only strings, ints and slices of them are encoded here.
		return "{}"
	}
	return strings.TrimSuffix(b.String(), "\n")
}
