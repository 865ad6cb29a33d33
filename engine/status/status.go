// Package status renders the model-facing status bar, <agent_status>: a
// small, bounded, deterministic projection of the engine's canonical run
// state (phase, open goals, budgets, environment, alerts). The model never
// writes it; code computes every field, each snapshot carries a monotonic
// state_version, and a shown snapshot can be re-rendered and compared. It
// also keeps the working set, the recently touched paths a turn's
// metadata shows.
//
// Volatile facts for people — retry countdowns, durations, cost, clock
// times — are not part of State and so can never reach the model.
package status

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tally-dev/tally/engine/transcript"
)

// Limits that keep the rendered block small (well under 300 tokens).
const (
	MaxGoals      = 8
	MaxAlerts     = 6
	MaxGoalChars  = 80
	MaxAlertChars = 140
)

// Budget is a used / limit pair computed by the engine.
type Budget struct {
	Used  int `json:"used"`
	Limit int `json:"limit"`
}

// Goal is one open checklist item.
type Goal struct {
	ID         string `json:"id"`
	Content    string `json:"content"`
	InProgress bool   `json:"in_progress"`
}

// State is the canonical run state the status is rendered from. Every
// field is computed by code; nothing in it comes from the model unchecked.
type State struct {
	Version   int64  `json:"state_version"`
	Phase     string `json:"phase"`
	Goals     []Goal `json:"remaining_goals"`
	Done      int    `json:"done"` // completed checklist items
	ToolCalls Budget `json:"tool_calls"`
	Steps     Budget `json:"steps"`
	Cwd       string `json:"cwd"`
	// Roots are the session's additional folders, whose files the tools
	// reach by absolute path; rendered only when there are some.
	Roots  []string `json:"additional_folders,omitempty"`
	Branch string   `json:"branch"` // "" when unknown: rendered as unknown, never guessed
	Alerts []string `json:"alerts"`
}

// Phases.
const (
	PhaseOrient  = "orient"  // no plan yet, first steps of the turn
	PhasePlan    = "plan"    // a checklist exists, nothing started
	PhaseExecute = "execute" // an item is in progress
	PhaseVerify  = "verify"  // every item is done
	PhaseWrapUp  = "wrap_up" // the step budget is nearly spent
	PhaseWork    = "work"    // none of the above
)

// PhaseOf derives the phase from the other fields.
func PhaseOf(s State) string {
	switch {
	case s.Steps.Limit > 0 && s.Steps.Used*5 >= s.Steps.Limit*4:
		return PhaseWrapUp
	case len(s.Goals) == 0 && s.Done > 0:
		return PhaseVerify
	}
	for _, g := range s.Goals {
		if g.InProgress {
			return PhaseExecute
		}
	}
	switch {
	case len(s.Goals) > 0:
		return PhasePlan
	case s.Steps.Used <= 1:
		return PhaseOrient
	}
	return PhaseWork
}

// Renderer turns a State into the text of a status block.
type Renderer func(State) (string, error)

// Tag is the status element name.
const Tag = "agent_status"

// Render is the default renderer. The same State always gives the same
// bytes. Strings are quoted and neutralised so a goal or alert text can
// neither break the layout nor open or close an engine tag.
func Render(s State) (string, error) {
	if s.Version <= 0 {
		return "", errors.New("a status block needs a positive state_version")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<%s visibility=\"internal\" state_version=\"%d\">\n", Tag, s.Version)
	fmt.Fprintf(&b, "phase: %s\n", s.Phase)
	writeGoals(&b, s)
	writeBudgets(&b, s)
	writeEnvironment(&b, s)
	writeAlerts(&b, s)
	fmt.Fprintf(&b, "</%s>", Tag)
	return b.String(), nil
}

func writeGoals(b *strings.Builder, s State) {
	if len(s.Goals) == 0 {
		fmt.Fprintf(b, "remaining_goals: []  # %d done\n", s.Done)
		return
	}
	fmt.Fprintf(b, "remaining_goals:  # %d open, %d done\n", len(s.Goals), s.Done)
	for i, g := range s.Goals {
		if i == MaxGoals {
			fmt.Fprintf(b, "  - (+%d more; call checklist_list)\n", len(s.Goals)-MaxGoals)
			break
		}
		mark := ""
		if g.InProgress {
			mark = " [in_progress]"
		}
		fmt.Fprintf(b, "  - #%s %s%s\n", safeID(g.ID), quote(g.Content, MaxGoalChars), mark)
	}
}

func writeBudgets(b *strings.Builder, s State) {
	fmt.Fprintf(b, "budgets: {tool_calls: %d/%d, steps: %d/%d}\n", s.ToolCalls.Used, s.ToolCalls.Limit, s.Steps.Used, s.Steps.Limit)
}

func writeEnvironment(b *strings.Builder, s State) {
	b.WriteString("environment:\n")
	fmt.Fprintf(b, "  cwd: %s\n", quote(s.Cwd, 200))
	if len(s.Roots) > 0 {
		quoted := make([]string, len(s.Roots))
		for i, r := range s.Roots {
			quoted[i] = quote(r, 200)
		}
		fmt.Fprintf(b, "  additional_folders: [%s]  # absolute paths reach them\n", strings.Join(quoted, ", "))
	}
	if s.Branch == "" {
		b.WriteString("  branch: unknown\n")
	} else {
		fmt.Fprintf(b, "  branch: %s\n", quote(s.Branch, 80))
	}
}

func writeAlerts(b *strings.Builder, s State) {
	if len(s.Alerts) == 0 {
		b.WriteString("alerts: []\n")
		return
	}
	b.WriteString("alerts:\n")
	for i, a := range s.Alerts {
		if i == MaxAlerts {
			fmt.Fprintf(b, "  - (+%d more)\n", len(s.Alerts)-MaxAlerts)
			break
		}
		fmt.Fprintf(b, "  - %s\n", quote(a, MaxAlertChars))
	}
}

func quote(s string, limit int) string {
	s = transcript.Neutralize(s)
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit-1]) + "…"
	}
	return strconv.Quote(s)
}

var idSafe = regexp.MustCompile(`[^A-Za-z0-9._-]`)

func safeID(id string) string {
	id = idSafe.ReplaceAllString(id, "_")
	if len(id) > 16 {
		id = id[:16]
	}
	return id
}

// Slot returns the text for the status slot of a request. If r is nil or
// fails, the slot says the status is unavailable and why — it never falls
// back to an earlier snapshot.
func Slot(r Renderer, s State) string {
	if r == nil {
		return unavailable(s.Version, "no status renderer is configured")
	}
	text, err := safeRender(r, s)
	if err != nil {
		return unavailable(s.Version, err.Error())
	}
	return text
}

func safeRender(r Renderer, s State) (text string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("status renderer crashed: %v", p)
		}
	}()
	return r(s)
}

func unavailable(version int64, why string) string {
	return fmt.Sprintf("<%s visibility=\"internal\" state_version=\"%d\" available=\"false\">\nstatus unavailable: %s. Do not rely on any earlier status block; read the checklist or the workspace directly.\n</%s>",
		Tag, version, transcript.Neutralize(why), Tag)
}

var versionRe = regexp.MustCompile(`^<agent_status visibility="internal" state_version="(\d+)"`)

// Version reads the state_version of a status block the engine wrote, or
// reports false when text is not one.
func Version(text string) (int64, bool) {
	m := versionRe.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	return v, err == nil
}

// Verify re-renders the canonical state and compares it with the text that
// was shown. A mismatch is a renderer defect and is reported with the first
// differing line; the canonical state is never corrected from the status.
func Verify(r Renderer, shown string, s State) error {
	want := Slot(r, s)
	if want == shown {
		return nil
	}
	sl, wl := strings.Split(shown, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(sl), len(wl)); i++ {
		var a, b string
		if i < len(sl) {
			a = sl[i]
		}
		if i < len(wl) {
			b = wl[i]
		}
		if a != b {
			return fmt.Errorf("the status shown for state_version %d disagrees with its canonical state at line %d: shown %q, canonical %q", s.Version, i+1, a, b)
		}
	}
	return fmt.Errorf("the status shown for state_version %d disagrees with its canonical state", s.Version)
}
