package status

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// RenderDelta renders a compact status block for cur that shows only what
// changed since prev, the state of the previous block in the log: the
// header names both versions (changes_since), the phase is always there,
// the goals appear as the open and done counts with only the goals that
// were added, changed or closed, and budgets, environment and alerts
// appear only when they differ. The model reads the fields a delta leaves out from the earlier
// blocks it names; the same (prev, cur) always give the same bytes.
func RenderDelta(prev, cur State) (string, error) {
	if cur.Version <= 0 || prev.Version <= 0 || prev.Version >= cur.Version {
		return "", errors.New("a status delta needs two positive state_versions, the earlier one first")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<%s visibility=\"internal\" state_version=\"%d\" changes_since=\"%d\">\n", Tag, cur.Version, prev.Version)
	fmt.Fprintf(&b, "phase: %s\n", cur.Phase)
	if !slices.Equal(prev.Goals, cur.Goals) || prev.Done != cur.Done {
		writeGoalChanges(&b, prev, cur)
	}
	if prev.ToolCalls != cur.ToolCalls || prev.Steps != cur.Steps {
		writeBudgets(&b, cur)
	}
	if prev.Cwd != cur.Cwd || prev.Branch != cur.Branch || !slices.Equal(prev.Roots, cur.Roots) {
		writeEnvironment(&b, cur)
		if len(prev.Roots) > 0 && len(cur.Roots) == 0 {
			b.WriteString("  additional_folders: []  # none any more\n")
		}
	}
	if !slices.Equal(prev.Alerts, cur.Alerts) {
		writeAlerts(&b, cur)
	}
	fmt.Fprintf(&b, "</%s>", Tag)
	return b.String(), nil
}

// writeGoalChanges writes the open and done counts and the goals that
// differ between prev and cur: new or changed ones as in a full block,
// closed ones (gone from the open list) as "#id closed".
func writeGoalChanges(b *strings.Builder, prev, cur State) {
	fmt.Fprintf(b, "goals:  # %d open, %d done; unchanged goals as in state_version %d\n", len(cur.Goals), cur.Done, prev.Version)
	before := map[string]Goal{}
	for _, g := range prev.Goals {
		before[g.ID] = g
	}
	open := map[string]bool{}
	shown := 0
	for _, g := range cur.Goals {
		open[g.ID] = true
		if old, ok := before[g.ID]; ok && old == g {
			continue
		}
		if shown == MaxGoals {
			b.WriteString("  - (more changed; call checklist_list)\n")
			return
		}
		shown++
		mark := ""
		if g.InProgress {
			mark = " [in_progress]"
		}
		fmt.Fprintf(b, "  - #%s %s%s\n", safeID(g.ID), quote(g.Content, MaxGoalChars), mark)
	}
	for _, g := range prev.Goals {
		if !open[g.ID] {
			fmt.Fprintf(b, "  - #%s closed\n", safeID(g.ID))
		}
	}
}
