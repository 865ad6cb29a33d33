package workbench

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// SearchHit is one match of Search: a session's title, or one message of
// any of its cycles (superseded messages included).
type SearchHit struct {
	Session string `json:"session"`
	Title   string `json:"title"`
	// Cycle is the message's cycle; 0 when the title matched.
	Cycle int `json:"cycle"`
	// Index is the message's position in its cycle's log, from 0; for a
	// superseded message, its position before the rebuild that replaced
	// it (as in Export).
	Index int `json:"index"`
	// Current reports that the message is in the session's current cycle
	// (not archived); Superseded that a rewrite (a compaction, a purge, a
	// rewind) replaced it, and SupersededBy which one, as the rebuild
	// record names it ("auto compaction", "rewind to turn 3").
	Current      bool            `json:"current"`
	Superseded   bool            `json:"superseded"`
	SupersededBy string          `json:"superseded_by,omitempty"`
	Role         transcript.Role `json:"role,omitempty"`
	Snippet      string          `json:"snippet"`
	// Message is the matching message, for showing it or finding it in
	// the chat.
	Message transcript.Message `json:"message"`
}

// MaxSearchHits caps the hits one search returns.
const MaxSearchHits = 200

// Search finds query in every session: titles, the user's prompts, the
// answers, tool calls and results, in every cycle including archived and
// superseded messages. Every word of the query must occur (case is
// ignored). Hits come session by session, newest session first, and
// within a session cycle by cycle, the superseded messages of a cycle
// before its log; at most MaxSearchHits of them, truncated reporting that
// more matched. A message that cannot be read is skipped, not an error.
//
// Search reads the store's search index, which the store keeps as
// messages are committed; the first search of an open store brings the
// index up to date (building it if it is missing). A session the index
// cannot answer for, as on a damaged store that refuses the build, is
// searched by reading its history, with the same results.
func (w *Workbench) Search(query string) (hits []SearchHit, truncated bool, err error) {
	words := strings.Fields(strings.ToLower(query))
	if len(words) == 0 {
		return nil, false, nil
	}
	_ = w.store.EnsureSearchIndex() // without it every session is read instead
	list, err := w.store.Sessions()
	if err != nil {
		return nil, false, err
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Updated.After(list[j].Updated) })
	add := func(h SearchHit) bool {
		if len(hits) >= MaxSearchHits {
			truncated = true
			return false
		}
		hits = append(hits, h)
		return true
	}
	q := storage.NewTextQuery(words)
	// Sessions are read through the index in one read transaction until
	// one needs reading the old way, which takes transactions of its own.
	for i, stop := 0, false; i < len(list) && !stop; {
		scan := -1
		err := w.store.View(func(tx *storage.Tx) error {
			for ; i < len(list) && !stop && scan < 0; i++ {
				s := list[i]
				if matchAll(strings.ToLower(s.Title), words) && !add(SearchHit{Session: s.ID, Title: s.Title, Snippet: s.Title}) {
					stop = true
					break
				}
				indexed, full := indexedHits(tx, s, words, q, add)
				if !indexed {
					scan = i
				}
				stop = full
			}
			return nil
		})
		if err != nil {
			return nil, false, err
		}
		if scan >= 0 && !stop {
			stop = !w.scanHits(list[scan], words, add)
		}
	}
	return hits, truncated, nil
}

// scanHits adds the hits of session s to add by reading its whole
// history, for a session the search index cannot answer for; it returns
// false when add refused a hit.
func (w *Workbench) scanHits(s storage.Session, words []string, add func(SearchHit) bool) bool {
	lines, err := w.exportLines(s.ID)
	if err != nil && len(lines) == 0 {
		return true
	}
	for _, l := range lines {
		if l.Rewrite != nil {
			continue
		}
		index := l.logIndex
		if l.Index != nil {
			index = *l.Index
		}
		text := searchText(l.Message)
		low := strings.ToLower(text)
		if !matchAll(low, words) {
			continue
		}
		h := SearchHit{Session: s.ID, Title: s.Title, Cycle: l.Cycle, Index: index, Current: l.Cycle == s.Cycle || (s.Cycle == 0 && l.Cycle == 1),
			Superseded: l.SupersededBy != "", SupersededBy: l.SupersededBy, Role: l.Message.Role, Snippet: hitSnippet(l.Message, words[0]), Message: l.Message}
		if !add(h) {
			return false
		}
	}
	return true
}

// searchText is what Search looks in: the message's text and reasoning,
// then each tool call's name and arguments. The search index keeps its
// lowercased result: change searchRules.Version when it changes.
func searchText(m transcript.Message) string {
	var b strings.Builder
	b.WriteString(m.Text())
	for _, c := range m.ToolCalls {
		b.WriteString("\n" + c.Name + " " + c.Arguments)
	}
	if m.ToolName != "" {
		b.WriteString("\n" + m.ToolName)
	}
	return b.String()
}

func matchAll(low string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(low, w) {
			return false
		}
	}
	return true
}

// Snippet is about 120 characters of text around the first occurrence of
// word (lower case; "" for the start), on one line, marked with "…" where
// it was cut. Search hits carry one; a view that shows another text of
// the hit cuts it with the same rule.
func Snippet(text, word string) string {
	return snippet(text, strings.ToLower(text), word)
}

// snippet is Snippet with text's lower-case form low given.
func snippet(text, low, word string) string {
	at := strings.Index(low, word)
	if at < 0 || len(low) != len(text) {
		at = 0
	}
	start := max(at-40, 0)
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	end := min(start+120, len(text))
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	s := strings.Join(strings.Fields(text[start:end]), " ")
	if start > 0 {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s
}
