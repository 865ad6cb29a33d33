package cycle

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
)

// Search limits.
const (
	// DefaultPageSize is the number of hits per page when none is given.
	DefaultPageSize = 5
	// MaxPageSize caps the hits per page.
	MaxPageSize = 50
)

// Archive is a closed cycle kept verbatim.
type Archive struct {
	Cycle    int                  `json:"cycle"`
	Started  time.Time            `json:"started"`
	Ended    time.Time            `json:"ended"`
	Brief    string               `json:"brief,omitempty"`
	Messages []transcript.Message `json:"messages"`
	// Tokens is the context level the cycle ended at.
	Tokens int `json:"tokens"`
	// Requests is the number of model requests the cycle made.
	Requests int `json:"requests"`
}

// Hit is one archived message that matched a search.
type Hit struct {
	// Handle names the message for a later fetch, like "c1:m17".
	Handle string          `json:"handle"`
	Cycle  int             `json:"cycle"`
	Index  int             `json:"index"`
	Role   transcript.Role `json:"role"`
	// Text is the message as it was: its text, then one line per tool call.
	Text string `json:"text"`
}

// Results is one page of a search.
type Results struct {
	Query    string `json:"query"`
	Page     int    `json:"page"`
	PageSize int    `json:"page_size"`
	// Total is the number of hits on all pages.
	Total int   `json:"total"`
	Hits  []Hit `json:"hits"`
}

// Pages returns the number of pages the results span.
func (r Results) Pages() int {
	if r.PageSize <= 0 {
		return 0
	}
	return (r.Total + r.PageSize - 1) / r.PageSize
}

// Handle returns the handle of message index of a cycle, like "c1:m17".
func Handle(cycle, index int) string {
	return "c" + strconv.Itoa(cycle) + ":m" + strconv.Itoa(index)
}

// ParseHandle splits a handle like "c1:m17" into its cycle and message
// index. Surrounding space and letter case are ignored.
func ParseHandle(h string) (cycle, index int, err error) {
	s := strings.ToLower(strings.TrimSpace(h))
	c, m, ok := strings.Cut(s, ":")
	if ok && strings.HasPrefix(c, "c") && strings.HasPrefix(m, "m") {
		cycle, err1 := strconv.Atoi(c[1:])
		index, err2 := strconv.Atoi(m[1:])
		if err1 == nil && err2 == nil && cycle >= 0 && index >= 0 {
			return cycle, index, nil
		}
	}
	return 0, 0, fmt.Errorf("handle %q is not of the form c<cycle>:m<message>, like c1:m17; copy a handle from the search results", h)
}

// MessageText returns what a search matches and shows of m: its text, then
// one line per tool call with the call's arguments.
func MessageText(m transcript.Message) string {
	parts := []string{}
	if t := m.Text(); t != "" {
		parts = append(parts, t)
	}
	for _, c := range m.ToolCalls {
		parts = append(parts, "call "+c.Name+" "+c.Arguments)
	}
	return strings.Join(parts, "\n")
}

// Search finds the archived messages that contain every term of query,
// ignoring letter case. Hits come newest cycle first and, within a cycle,
// newest message first; page (from 1) and pageSize select a window of
// them, and Total counts them all. An empty query has no hits. pageSize
// defaults to DefaultPageSize and is capped at MaxPageSize; page defaults
// to 1.
func Search(archives []Archive, query string, page, pageSize int) Results {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	pageSize = min(pageSize, MaxPageSize)
	page = max(page, 1)
	res := Results{Query: query, Page: page, PageSize: pageSize}
	terms := strings.Fields(strings.ToLower(query))
	if len(terms) == 0 {
		return res
	}
	order := make([]int, len(archives))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return archives[order[a]].Cycle > archives[order[b]].Cycle })
	first := (page - 1) * pageSize
	for _, ai := range order {
		a := archives[ai]
		for i := len(a.Messages) - 1; i >= 0; i-- {
			text := MessageText(a.Messages[i])
			if !matchesAll(strings.ToLower(text), terms) {
				continue
			}
			if res.Total >= first && len(res.Hits) < pageSize {
				res.Hits = append(res.Hits, Hit{Handle: Handle(a.Cycle, i), Cycle: a.Cycle, Index: i, Role: a.Messages[i].Role, Text: text})
			}
			res.Total++
		}
	}
	return res
}

func matchesAll(text string, terms []string) bool {
	for _, t := range terms {
		if !strings.Contains(text, t) {
			return false
		}
	}
	return true
}

// Lookup returns the message a handle names.
func Lookup(archives []Archive, handle string) (Hit, error) {
	cycle, index, err := ParseHandle(handle)
	if err != nil {
		return Hit{}, err
	}
	for _, a := range archives {
		if a.Cycle != cycle {
			continue
		}
		if index >= len(a.Messages) {
			return Hit{}, fmt.Errorf("cycle %d has %d messages, so %s does not exist; copy a handle from the search results", cycle, len(a.Messages), Handle(cycle, index))
		}
		m := a.Messages[index]
		return Hit{Handle: Handle(cycle, index), Cycle: cycle, Index: index, Role: m.Role, Text: MessageText(m)}, nil
	}
	return Hit{}, fmt.Errorf("no archived cycle %d exists; search first and copy a handle from the results", cycle)
}
