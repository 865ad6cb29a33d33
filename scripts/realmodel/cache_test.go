//go:build realmodel

package realmodel_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/internal/realmodel"
)

// TestPromptCache runs a session long enough for a summary to replace
// part of it, a compaction (tally compact), a turn, a new cycle
// (/new-cycle) and a last turn, and lays llama-server's own figures for
// every request (cache_n, prompt_n) beside Tally's ledger: each request
// that extends the one before has only its new tokens evaluated, and the
// table shows what the compaction and the new cycle cost in tokens
// evaluated afresh.
//
// SmolLM2 writes every summary to its 2,048-token cap, and Tally keeps
// the history when a summary is no shorter than the messages it would
// replace; so the session first grows, with automatic compaction and
// cycles off for those turns (--compaction off --cycle-at 0), until what
// a summary replaces is longer than that: its first turn shows the model
// a run_shell call that prints a long changelog (a tool result no pin
// keeps), the others are plain questions. Past them, the turns run with
// Tally's defaults, which may compact or start a cycle on their own; the
// table says which requests were whose.
func TestPromptCache(t *testing.T) {
	if short() {
		t.Skip("the long session is not part of the short form")
	}
	r := newRig(t, "cache", realmodel.ServerOptions{Template: env.template})
	files := map[string]string{"changelog.txt": changelog()}
	for name, text := range wireFiles {
		files[name] = text
	}
	ws := r.workspace("ws", files)
	ctx := context.Background()
	var labels []string // what each chat request was for, in order
	mark := func(what string) func() {
		n0 := len(r.proxy.Exchanges())
		return func() {
			for _, e := range r.proxy.Since(n0) {
				if e.Chat() {
					labels = append(labels, what)
				}
			}
		}
	}
	var steps []string // what each phase did, as tally said it
	for i, p := range cachePrompts {
		done := mark(fmt.Sprintf("turn %d", i+1))
		r.turn("cache", ws, p, "--max-steps", "5", "--compaction", "off", "--cycle-at", "0")
		done()
	}
	done := mark("tally compact")
	res := r.tally.Command(ctx, ws, "compact", "cache", "--json")
	t.Logf("tally compact: exit %d in %s: %s", res.Exit, res.Duration.Round(time.Millisecond), strings.TrimSpace(res.Stdout+res.Stderr))
	if res.Crashed || res.Hung {
		t.Fatalf("tally compact: %v", res.Err())
	}
	done()
	steps = append(steps, "tally compact: "+compactOutcome(res))
	after := "On which day is the release?"
	done = mark("turn after compact")
	_, events := r.turn("cache", ws, after, "--max-steps", "5")
	done()
	steps = append(steps, "turn after compact: "+rebuilds(events))
	done = mark("/new-cycle")
	res, _ = r.turn("cache", ws, "/new-cycle")
	done()
	steps = append(steps, "/new-cycle: "+strings.TrimSpace(res.Stdout+res.Stderr))
	last := "Summarise notes.txt in one line."
	done = mark("turn in the new cycle")
	_, events = r.turn("cache", ws, last, "--max-steps", "5")
	done()
	steps = append(steps, "turn in the new cycle: "+rebuilds(events))

	ex := r.proxy.Exchanges()
	r.checkExchanges("cache", append(append([]string{}, cachePrompts...), after, last), ex)
	rows := cacheRows(r, "cache", ex)
	for i := range rows {
		if i < len(labels) {
			kind := rows[i].Label
			rows[i].Label = labels[i]
			if kind != "turn" {
				rows[i].Label += " (" + kind + ")"
			}
		}
	}
	checkReuse(t, rows)
	var kinds []string
	for _, row := range rows {
		kinds = append(kinds, row.Label)
	}
	if !slices.ContainsFunc(kinds, func(l string) bool { return strings.HasSuffix(l, "(summary)") }) {
		t.Error("no summary request: the run has no compaction by the model")
	}
	if !slices.ContainsFunc(kinds, func(l string) bool { return strings.HasSuffix(l, "(brief)") }) {
		t.Error("no brief request: the run has no new cycle")
	}
	writeOut(t, "cache.md", realmodel.CacheTable(rows)+"\n"+costByPhase(rows)+"\n"+strings.Join(steps, "\n\n")+"\n")
}

// cachePrompts are the turns that grow the cache session: the first
// shows the call that prints changelog.txt (some 2,000 tokens of
// result), the others are plain questions, which SmolLM2 answers with
// text up to its 256-token cap, about 300 tokens a turn. Together they
// take the history past what a 2,048-token summary can replace, with the
// changelog out of the last messages (which compaction keeps), while the
// context stays inside the 8,192-token window.
var cachePrompts = []string{
	"Show me the changelog. Reply with exactly:\n" + call("run_shell", `{"command": "cat changelog.txt"}`),
	"Which Go version does the build use?",
	"What does app.py print?",
	"Suggest a name for this project.",
}

// changelog is a long file of plain release notes (no word that marks
// an error, which compaction would keep).
func changelog() string {
	areas := []string{"the settings page", "the session list", "the export", "the search", "the status bar", "the chat view"}
	verbs := []string{"opens faster", "remembers its width", "shows the date of each entry", "reads larger files", "keeps its scroll position", "names the model in use"}
	var b strings.Builder
	for i := 100; i > 0; i-- {
		fmt.Fprintf(&b, "Release 1.%d: %s %s, and the help text for it was rewritten.\n", i, areas[i%len(areas)], verbs[(i/len(areas))%len(verbs)])
	}
	return b.String()
}

// compactOutcome says what `tally compact --json` did.
func compactOutcome(res realmodel.Result) string {
	var out struct {
		Applied      bool   `json:"applied"`
		Source       string `json:"source"`
		TokensBefore int    `json:"tokens_before"`
		TokensAfter  int    `json:"tokens_after"`
	}
	if res.Exit != 0 || json.Unmarshal([]byte(res.Stdout), &out) != nil {
		return strings.TrimSpace(res.Stdout + res.Stderr)
	}
	if !out.Applied {
		return "nothing applied"
	}
	return fmt.Sprintf("applied (%s), %d → %d tokens by Tally's count", cmp.Or(out.Source, "cheap layers"), out.TokensBefore, out.TokensAfter)
}

// rebuilds lists the rebuild events of a turn (an automatic compaction
// or cycle), or says there were none.
func rebuilds(events []realmodel.Event) string {
	var out []string
	for _, e := range events {
		if e.Kind == "rebuild" {
			line := string(e.Raw)
			if len(line) > 400 {
				line = line[:400] + "…"
			}
			out = append(out, "`"+line+"`")
		}
	}
	if len(out) == 0 {
		return "no rebuild"
	}
	return strings.Join(out, "; ")
}

// costByPhase adds up, per label, the requests and the tokens
// llama-server evaluated afresh and took from its cache.
func costByPhase(rows []realmodel.CacheRow) string {
	var b strings.Builder
	b.WriteString("| phase | requests | prompt tokens | cache_n | evaluated (prompt_n) | evaluated share |\n|---|---|---|---|---|---|\n")
	type sum struct{ n, prompt, cached, eval int }
	var order []string
	sums := map[string]*sum{}
	var tot sum
	for _, r := range rows {
		s := sums[r.Label]
		if s == nil {
			s = &sum{}
			sums[r.Label] = s
			order = append(order, r.Label)
		}
		s.n++
		tot.n++
		if r.Usage != nil {
			s.prompt += r.Usage.PromptTokens
			tot.prompt += r.Usage.PromptTokens
		}
		if r.Timings != nil {
			s.cached += r.Timings.CacheN
			s.eval += r.Timings.PromptN
			tot.cached += r.Timings.CacheN
			tot.eval += r.Timings.PromptN
		}
	}
	line := func(name string, s sum) {
		share := 0.0
		if s.prompt > 0 {
			share = 100 * float64(s.eval) / float64(s.prompt)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.1f %% |\n", name, s.n, s.prompt, s.cached, s.eval, share)
	}
	for _, l := range order {
		line(l, *sums[l])
	}
	line("all", tot)
	return b.String()
}

// TestOwnTemplate runs one turn with the model's own chat template, which
// has no tool syntax: this llama.cpp then neither shows the model the
// tools nor parses calls out of its reply, so every answer is text. The
// wire must hold all the same: every request accepted, every reply
// stored.
func TestOwnTemplate(t *testing.T) {
	if short() {
		t.Skip("not part of the short form")
	}
	r := newRig(t, "own-template", realmodel.ServerOptions{})
	ws := r.workspace("ws", wireFiles)
	prompts := []string{"Read notes.txt and tell me on which day the release is.", "Create a file done.txt containing yes."}
	for _, p := range prompts {
		r.turn("own", ws, p, "--max-steps", "4")
	}
	ex := r.proxy.Exchanges()
	r.checkExchanges("own", prompts, ex)
	var b strings.Builder
	b.WriteString("| request | finish_reason | tool calls | reply |\n|---|---|---|---|\n")
	for _, e := range ex {
		if !e.Chat() {
			continue
		}
		if len(e.Calls) > 0 {
			t.Errorf("request %d: llama-server parsed %d tool call(s) with a template that has no tool syntax", e.N, len(e.Calls))
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %s |\n", e.N, e.Finish, len(e.Calls), strings.ReplaceAll(clip(strings.ReplaceAll(e.Content, "\n", " ")), "|", "\\|"))
	}
	writeOut(t, "own-template.md", b.String())
}
