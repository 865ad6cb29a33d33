package cycle

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tally-dev/tally/engine/tool"
)

//go:embed recall_archive.md
var recallDoc string

// Recall limits.
const (
	// RecallName is the tool's name.
	RecallName = "recall_archive"
	// RecallMaxChars bounds one result of the tool.
	RecallMaxChars = 12_000
	// RecallPageSize is the number of hits per page.
	RecallPageSize = 5
	// ExcerptChars is the length of one hit's excerpt, around its first
	// matching term.
	ExcerptChars = 1_600
)

// RecallParams are the arguments of recall_archive.
type RecallParams struct {
	Query  string `json:"query,omitempty"`
	Page   int    `json:"page,omitempty"`
	Handle string `json:"handle,omitempty"`
}

var recallSpec = tool.Spec{
	Name:        RecallName,
	Description: strings.TrimSpace(recallDoc),
	Parameters: json.RawMessage(`{
		"type": "object",
		"properties": {
			"query": {"type": "string", "description": "Keywords that must all appear in a message, ignoring case."},
			"page": {"type": "integer", "minimum": 1, "description": "Results page, starting at 1. Default 1."},
			"handle": {"type": "string", "description": "A handle from the results, like c1:m17, to read that message in full."}
		},
		"additionalProperties": false
	}`),
}

type recall struct {
	load func() ([]Archive, error)
}

// RecallTool returns the recall_archive tool, which searches the closed
// cycles that load returns (called once per use, so it sees cycles closed
// since) and fetches one message by handle. Its answers stay under
// RecallMaxChars; bad arguments, an unreadable archive or an unknown
// handle come back as error results that say what to do. It needs no
// approval.
func RecallTool(load func() ([]Archive, error)) tool.Tool { return recall{load: load} }

func (recall) Spec() tool.Spec     { return recallSpec }
func (recall) NeedsApproval() bool { return false }

func (r recall) Run(ctx context.Context, env *tool.Env, args json.RawMessage) tool.Result {
	var p RecallParams
	if err := decode(args, &p); err != nil {
		return fail(err.Error())
	}
	p.Query, p.Handle = strings.TrimSpace(p.Query), strings.TrimSpace(p.Handle)
	switch {
	case p.Query != "" && p.Handle != "":
		return fail("pass either query or handle, not both; search with query first, then fetch one result by its handle")
	case p.Query == "" && p.Handle == "":
		return fail("query is empty; pass keywords to search for, or a handle like c1:m17 to read one message")
	case p.Page < 0:
		return fail(fmt.Sprintf("page %d is negative; pass a page number starting at 1", p.Page))
	}
	if r.load == nil {
		return fail("no archive is available in this session; there are no earlier cycles to search")
	}
	if err := ctx.Err(); err != nil {
		return fail("the search was cancelled; call the tool again")
	}
	archives, err := r.load()
	if err != nil {
		return fail(fmt.Sprintf("the archive could not be read (%v); try again, and continue without it if it keeps failing", err))
	}
	if len(archives) == 0 {
		return tool.Result{Content: "The archive is empty: this is the first cycle of the session, so there is nothing earlier to recall."}
	}
	if p.Handle != "" {
		hit, err := Lookup(archives, p.Handle)
		if err != nil {
			return fail(err.Error())
		}
		head := fmt.Sprintf("%s (%s, cycle %d, message %d):\n", hit.Handle, hit.Role, hit.Cycle, hit.Index)
		return tool.Result{Content: head + tool.Truncate(hit.Text, RecallMaxChars-len(head)-200)}
	}
	res := Search(archives, p.Query, p.Page, RecallPageSize)
	return tool.Result{Content: renderResults(res)}
}

// renderResults formats a page of hits with an excerpt each.
func renderResults(res Results) string {
	var b strings.Builder
	if res.Total == 0 {
		fmt.Fprintf(&b, "No archived message contains all of: %s. Try fewer or different keywords.", res.Query)
		return b.String()
	}
	if len(res.Hits) == 0 {
		fmt.Fprintf(&b, "Page %d is past the end: %d results on %d pages for %q.", res.Page, res.Total, res.Pages(), res.Query)
		return b.String()
	}
	fmt.Fprintf(&b, "%d results for %q, page %d of %d (most recent cycle first):\n", res.Total, res.Query, res.Page, res.Pages())
	terms := strings.Fields(strings.ToLower(res.Query))
	for _, h := range res.Hits {
		fmt.Fprintf(&b, "\n[%s] %s, cycle %d, message %d:\n%s\n", h.Handle, h.Role, h.Cycle, h.Index, excerpt(h.Text, terms, ExcerptChars))
	}
	if res.Page < res.Pages() {
		fmt.Fprintf(&b, "\nMore results: call again with page %d. Read one message in full with its handle.", res.Page+1)
	} else {
		b.WriteString("\nRead one message in full with its handle.")
	}
	out := b.String()
	if len(out) > RecallMaxChars {
		out = tool.Truncate(out, RecallMaxChars-200)
	}
	return out
}

// excerpt returns up to n bytes of text around the first matching term,
// marking what was left out on either side.
func excerpt(text string, terms []string, n int) string {
	if len(text) <= n {
		return text
	}
	at := -1
	lower := strings.ToLower(text)
	for _, t := range terms {
		if i := strings.Index(lower, t); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	// Lowercasing can change byte lengths; fall back to the start.
	if at < 0 || len(lower) != len(text) {
		at = 0
	}
	start := max(0, at-n/4)
	end := min(len(text), start+n)
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end--
	}
	out := text[start:end]
	if start > 0 {
		out = "… " + out
	}
	if end < len(text) {
		out += " …"
	}
	return out
}

// decode reads the tool arguments with the strict decoder all tools share.
func decode(args json.RawMessage, p *RecallParams) error { return tool.DecodeArgs(args, p) }

func fail(msg string) tool.Result {
	return tool.Result{Content: RecallName + ": " + msg, IsError: true}
}
