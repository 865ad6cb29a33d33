package realmodel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tally-dev/tally/engine/ledger"
)

// Kinds are the task kinds in the order the tables show them.
var Kinds = []string{"create", "rename", "fix", "answer", "checklist"}

// EvalTable is the evaluation's table: one line per arm with its pass
// rate (overall and by kind), requests, tokens and evaluated tokens.
func EvalTable(sums []ArmSummary) string {
	var b strings.Builder
	b.WriteString("| arm | passed | ")
	for _, k := range Kinds {
		b.WriteString(k + " | ")
	}
	b.WriteString("requests | prompt tokens | evaluated | cached | generated | tool calls (errors, blocked repeats) | turns ended | problems | time |\n|---|---|")
	b.WriteString(strings.Repeat("---|", len(Kinds)+9))
	b.WriteByte('\n')
	for _, s := range sums {
		pct := 0.0
		if s.Tasks > 0 {
			pct = 100 * float64(s.Passed) / float64(s.Tasks)
		}
		fmt.Fprintf(&b, "| %s | %d/%d (%.0f %%) | ", s.Arm, s.Passed, s.Tasks, pct)
		for _, k := range Kinds {
			n := s.ByKind[k]
			fmt.Fprintf(&b, "%d/%d | ", n[0], n[1])
		}
		fmt.Fprintf(&b, "%d | %d | %d | %d | %d | %d (%d, %d) | %s | %d | %.0f s |\n",
			s.Requests, s.Prompt, s.Evaluated, s.Cached, s.Completion, s.ToolCalls, s.ToolErrors, s.Blocked, ends(s.Ends), s.Problems, s.Duration.Seconds())
	}
	return b.String()
}

// ends lists the turns by how they ended, in a fixed order.
func ends(m map[string]int) string {
	var parts []string
	for _, k := range []string{"done", "step_limit", "halted", "failed", "cancelled", ""} {
		if n := m[k]; n > 0 {
			name := strings.ReplaceAll(k, "_", " ")
			if k == "" {
				name = "no end event"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
	}
	return strings.Join(parts, ", ")
}

// TaskTable shows every task's result in each arm.
func TaskTable(results []TaskResult, arms []string) string {
	var b strings.Builder
	b.WriteString("| task | kind |")
	for _, a := range arms {
		fmt.Fprintf(&b, " %s |", a)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(arms)) + "\n")
	var names []string
	byKey := map[string]TaskResult{}
	for _, r := range results {
		if !slices.Contains(names, r.Task) {
			names = append(names, r.Task)
		}
		byKey[r.Task+"\x00"+r.Arm] = r
	}
	for _, n := range names {
		kind := ""
		var cells []string
		for _, a := range arms {
			r, ok := byKey[n+"\x00"+a]
			switch {
			case !ok:
				cells = append(cells, "—")
			case r.Pass:
				cells = append(cells, fmt.Sprintf("pass (%d req)", r.Requests))
			default:
				cells = append(cells, fmt.Sprintf("fail (%d req): %s", r.Requests, cell(r.Why)))
			}
			if ok {
				kind = r.Kind
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", n, kind, strings.Join(cells, " | "))
	}
	return b.String()
}

// CacheRow is one request of a measured session: what llama-server
// evaluated for it beside what Tally's ledger recorded.
type CacheRow struct {
	// Label says what the request was for (a turn's step, a summary, a
	// brief).
	Label string
	Exchange
	// Shared is how many leading messages it shares with the request
	// before it, of Prev messages that request had.
	Shared, Prev, Messages int
	// Row is Tally's ledger row of the request, when one was matched.
	Row *ledger.Row
}

// CacheTable lays out a session's requests side by side with the ledger.
func CacheTable(rows []CacheRow) string {
	var b strings.Builder
	b.WriteString("| # | request | messages (shared with previous) | server: prompt | cache_n | prompt_n (evaluated) | generated | ledger: prompt | hit | miss | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, r := range rows {
		var prompt, cacheN, promptN, gen string
		if r.Usage != nil {
			prompt, gen = fmt.Sprint(r.Usage.PromptTokens), fmt.Sprint(r.Usage.CompletionTokens)
		}
		if r.Timings != nil {
			cacheN, promptN = fmt.Sprint(r.Timings.CacheN), fmt.Sprint(r.Timings.PromptN)
		}
		lp, lh, lm, note := "—", "—", "—", ""
		if r.Row != nil {
			lp, lh, lm = fmt.Sprint(r.Row.PromptTokens), fmt.Sprint(r.Row.CacheHitTokens), fmt.Sprint(r.Row.CacheMissTokens)
			note = string(r.Row.Kind)
			if r.Row.Rebuild != "" {
				note = strings.TrimSpace(note + " after " + r.Row.Rebuild)
			}
		}
		fmt.Fprintf(&b, "| %d | %s | %d (%d of %d) | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			i+1, r.Label, r.Messages, r.Shared, r.Prev, prompt, cacheN, promptN, gen, lp, lh, lm, cell(note))
	}
	return b.String()
}

// cell makes s fit in one table cell, its angle brackets escaped so a
// reply's markup is shown, never rendered.
func cell(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", "\\|")
	s = strings.ReplaceAll(strings.ReplaceAll(s, "<", "&lt;"), ">", "&gt;")
	if r := []rune(s); len(r) > 90 {
		s = string(r[:90]) + "…"
	}
	return s
}
