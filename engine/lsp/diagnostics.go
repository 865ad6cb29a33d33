package lsp

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tally-dev/tally/internal/text"
)

// Diagnostic is one problem a language server reported in a file.
type Diagnostic struct {
	// Path is the file, workspace-relative and slash-separated.
	Path string
	// Line and Column are where the problem starts, 1-based; Column
	// counts characters (Unicode code points) of the line.
	Line, Column int
	// Severity is "error", "warning", "info" or "hint".
	Severity string
	// Message is the server's text, which may span lines.
	Message string
	// Source is the tool that found it ("compiler", "Pyright", "ts"),
	// or the server's name when it said none; Code is its code ("" when
	// none), such as "2322".
	Source, Code string
}

// Set is diagnostics by workspace-relative path; a file without
// diagnostics has no entry.
type Set map[string][]Diagnostic

// Report says how a [Manager.Diagnostics] call went.
type Report struct {
	// Waited is how long the call took.
	Waited time.Duration
	// Servers are the servers whose diagnostics were asked for.
	Servers []string
	// Late are the servers that did not settle within the wait: still
	// starting, no diagnostics for the files in time, or failed while
	// the call waited. Their diagnostics, if any, are as last published.
	Late []string
	// Notes hold one sentence per problem: a refused path, a server not
	// installed, failed or late.
	Notes []string
}

// waitItem is one server's part of a Diagnostics wait.
type waitItem struct {
	s        *server
	rels     []string
	startBy  time.Time
	settleBy time.Time
	done     bool
}

// Diagnostics syncs paths (see [Manager.Sync]) and returns the current
// diagnostics of those files from every server that handles them. With
// no paths it returns those of every file synced so far, without a sync.
//
// It waits for each server to settle: a server settles when it has
// published diagnostics for each of the files after their last change and
// either said they are for the current version or then published nothing
// for a short quiet interval. The wait is bounded: at most StartTimeout
// for a server that is starting, then at most Settle for its
// diagnostics, and never past ctx. A server that did not settle in time
// is named in Report.Late, with what it published so far in the Set.
func (m *Manager) Diagnostics(ctx context.Context, paths ...string) (set Set, rep Report) {
	began := time.Now()
	defer func() { rep.Waited = time.Since(began) }()
	if err := m.usable(); err != nil {
		rep.Notes = append(rep.Notes, err.Error())
		return Set{}, rep
	}
	var rels []string
	if len(paths) == 0 {
		m.mu.Lock()
		for rel, d := range m.docs {
			if !d.deleted {
				rels = append(rels, rel)
			}
		}
		m.mu.Unlock()
		slices.Sort(rels)
	} else {
		var err error
		rels, err = m.sync(ctx, paths)
		if err != nil {
			rep.Notes = append(rep.Notes, strings.Split(err.Error(), "\n")...)
		}
	}
	want := map[string]document{}
	for _, rel := range rels {
		if d, ok := m.doc(rel); ok {
			want[rel] = d
		}
	}
	var items []*waitItem
	for _, s := range m.servers {
		var mine []string
		for _, rel := range rels {
			if s.cfg.handles(rel) {
				mine = append(mine, rel)
			}
		}
		if len(mine) > 0 {
			items = append(items, &waitItem{s: s, rels: mine})
			rep.Servers = append(rep.Servers, s.cfg.Name)
		}
	}
	m.settle(ctx, items, want, &rep)
	return m.collect(items, want), rep
}

// Current returns the diagnostics the servers last published for paths
// (every synced file when none is given), without syncing or waiting: a
// cheap "before" for [NewIn] when a caller is about to change a file.
// Files never synced, and paths outside the workspace, have none.
func (m *Manager) Current(paths ...string) Set {
	if m.usable() != nil {
		return Set{}
	}
	want := map[string]document{}
	m.mu.Lock()
	if len(paths) == 0 {
		for rel, d := range m.docs {
			want[rel] = *d
		}
	}
	m.mu.Unlock()
	for _, p := range paths {
		if rel, err := m.rel(p); err == nil {
			if d, ok := m.doc(rel); ok {
				want[rel] = d
			}
		}
	}
	var items []*waitItem
	for _, s := range m.servers {
		it := &waitItem{s: s}
		for rel := range want {
			if s.cfg.handles(rel) {
				it.rels = append(it.rels, rel)
			}
		}
		if len(it.rels) > 0 {
			items = append(items, it)
		}
	}
	return m.collect(items, want)
}

// settle waits for the servers of items, as Diagnostics says.
func (m *Manager) settle(ctx context.Context, items []*waitItem, want map[string]document, rep *Report) {
	for {
		m.mu.Lock()
		changed := m.changed
		m.mu.Unlock()
		now := time.Now()
		var next time.Time
		later := func(t time.Time) {
			if next.IsZero() || t.Before(next) {
				next = t
			}
		}
		for _, it := range items {
			if it.done {
				continue
			}
			if wake, pending := m.check(it, want, now, rep); pending {
				later(wake)
			}
		}
		if next.IsZero() {
			return
		}
		t := time.NewTimer(max(time.Until(next), time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			for _, it := range items {
				if !it.done {
					it.done = true
					rep.Late = append(rep.Late, it.s.cfg.Name)
					rep.Notes = append(rep.Notes, fmt.Sprintf("the wait for the diagnostics of %q was cut short (%v)", it.s.cfg.Name, ctx.Err()))
				}
			}
			return
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// check looks at one server of a wait: it marks the item done (with a
// note when the server is not there or late) or returns when to look
// again.
func (m *Manager) check(it *waitItem, want map[string]document, now time.Time, rep *Report) (time.Time, bool) {
	s := it.s
	s.mu.Lock()
	state, reason, c := s.state, s.reason, s.c
	var ok bool
	var wake time.Time
	if state == StateRunning && c != nil {
		ok, wake = settledLocked(c, it.rels, want, now)
	}
	s.mu.Unlock()
	late := func(why string) {
		it.done = true
		rep.Late = append(rep.Late, s.cfg.Name)
		rep.Notes = append(rep.Notes, why)
	}
	switch state {
	case StateRunning:
		if it.settleBy.IsZero() {
			it.settleBy = now.Add(m.opts.Settle)
		}
		switch {
		case ok:
			it.done = true
		case !now.Before(it.settleBy):
			late(fmt.Sprintf("the language server %q published no settled diagnostics for %s within %s; they may be incomplete", s.cfg.Name, strings.Join(it.rels, ", "), m.opts.Settle))
		default:
			if wake.IsZero() || wake.After(it.settleBy) {
				wake = it.settleBy
			}
			return wake, true
		}
	case StateStarting:
		if it.startBy.IsZero() {
			it.startBy = now.Add(m.opts.StartTimeout)
		}
		if !now.Before(it.startBy) {
			late(fmt.Sprintf("the language server %q did not finish starting within %s; its diagnostics come on a later call", s.cfg.Name, m.opts.StartTimeout))
			return time.Time{}, false
		}
		return it.startBy, true
	case StateStopped:
		if !m.isClosed() {
			s.ensure()
			if s.status().State != StateStopped {
				return now.Add(10 * time.Millisecond), true
			}
		}
		it.done = true
	default:
		if reason == "" {
			reason = s.status().Reason
		}
		if !it.startBy.IsZero() || !it.settleBy.IsZero() {
			late(reason) // it failed while this call waited for it
			return time.Time{}, false
		}
		it.done = true
		rep.Notes = append(rep.Notes, reason)
	}
	return time.Time{}, false
}

// settledLocked reports whether c has settled for rels (see
// Diagnostics), or when to look again for the quiet interval to pass;
// the caller holds the server's lock.
func settledLocked(c *conn, rels []string, want map[string]document, now time.Time) (bool, time.Time) {
	versioned := true
	var took time.Duration // the longest a publish came after its file was sent
	for _, rel := range rels {
		w, ok := want[rel]
		if !ok || w.deleted {
			continue
		}
		sd, isOpen := c.open[rel]
		if !isOpen || sd.version < w.version {
			return false, time.Time{}
		}
		pub := c.diags[rel]
		if pub == nil || pub.at.Before(sd.at) || pub.version != 0 && pub.version < sd.version {
			return false, time.Time{}
		}
		if pub.version != sd.version {
			versioned = false
		}
		took = max(took, pub.at.Sub(sd.at))
	}
	// A server may publish twice for one version (gopls: the file's own
	// errors at once, its type errors after the package is checked), so
	// even versioned diagnostics settle only after a short quiet spell;
	// unversioned ones after one as long as their publishes took (see
	// maxQuiet).
	wait := quiet
	if versioned {
		wait = versionedQuiet
	} else {
		wait = max(wait, min(took, maxQuiet))
	}
	if q := c.lastPublish.Add(wait); now.Before(q) {
		return false, q
	}
	return true, time.Time{}
}

// collect gathers the current diagnostics of the wanted files from every
// server of items.
func (m *Manager) collect(items []*waitItem, want map[string]document) Set {
	set := Set{}
	for _, it := range items {
		s := it.s
		s.mu.Lock()
		var got map[string][]diagnostic
		if c := s.c; c != nil {
			got = map[string][]diagnostic{}
			for _, rel := range it.rels {
				if pub := c.diags[rel]; pub != nil && len(pub.items) > 0 {
					got[rel] = pub.items
				}
			}
		}
		s.mu.Unlock()
		for rel, ds := range got {
			d, ok := want[rel]
			if !ok || d.deleted {
				continue
			}
			for _, pd := range ds {
				set[rel] = append(set[rel], convert(rel, d.text, s.cfg.Name, pd))
			}
		}
	}
	for _, ds := range set {
		slices.SortStableFunc(ds, func(a, b Diagnostic) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), strings.Compare(a.Message, b.Message))
		})
	}
	return set
}

// convert turns one protocol diagnostic of the file rel, whose text is
// given, into a Diagnostic.
func convert(rel, content, server string, pd diagnostic) Diagnostic {
	line := int(pd.Range.Start.Line)
	lt, _ := lineAt(content, line)
	d := Diagnostic{
		Path: rel, Line: line + 1, Column: runeColumn(lt, int(pd.Range.Start.Character)),
		Severity: severity(pd.Severity), Message: strings.ToValidUTF8(pd.Message, "\uFFFD"),
		Source: text.OneLine(pd.Source, 60), Code: code(pd.Code),
	}
	if d.Source == "" {
		d.Source = server
	}
	return d
}

// severity is the name of a diagnostic's severity.
func severity(s diagnosticSeverity) string {
	switch s {
	case diagnosticSeverityError:
		return "error"
	case diagnosticSeverityWarning:
		return "warning"
	case diagnosticSeverityInformation:
		return "info"
	case diagnosticSeverityHint:
		return "hint"
	}
	return "error" // the specification leaves a missing severity to the client
}

func code(v any) string {
	switch c := v.(type) {
	case nil:
		return ""
	case string:
		return text.OneLine(c, 60)
	case float64:
		return strconv.FormatFloat(c, 'f', -1, 64)
	}
	return text.OneLine(fmt.Sprint(v), 60)
}

// Errors returns the diagnostics of the set whose severity is "error".
func (s Set) Errors() []Diagnostic {
	var out []Diagnostic
	for _, p := range s.paths() {
		for _, d := range s[p] {
			if d.Severity == "error" {
				out = append(out, d)
			}
		}
	}
	return out
}

// paths returns the set's paths, sorted.
func (s Set) paths() []string {
	out := make([]string, 0, len(s))
	for p := range s {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// diagKey is what NewIn matches diagnostics by.
type diagKey struct{ path, severity, message, code string }

// NewIn returns the diagnostics of after that before does not have:
// matched as a multiset on path, severity, message and code, so a
// problem that only moved to another line (an edit above it) is not new,
// while a second copy of a message is. The result keeps after's order.
func NewIn(before, after Set) Set {
	count := map[diagKey]int{}
	for _, ds := range before {
		for _, d := range ds {
			count[diagKey{d.Path, d.Severity, d.Message, d.Code}]++
		}
	}
	out := Set{}
	for _, p := range after.paths() {
		for _, d := range after[p] {
			k := diagKey{d.Path, d.Severity, d.Message, d.Code}
			if count[k] > 0 {
				count[k]--
				continue
			}
			out[p] = append(out[p], d)
		}
	}
	return out
}

// maxRenderedMessage bounds one rendered message, in characters.
const maxRenderedMessage = 300

// Render formats set for the model, one diagnostic a line,
// "path:line:col: severity: message (source)", sorted by path and
// position, with each message on one line and cut at 300 characters.
// With limit > 0 at most limit lines are written and a last line says
// "(N more omitted)". An empty set renders as "".
func Render(set Set, limit int) string {
	var b strings.Builder
	n, total := 0, 0
	for _, p := range set.paths() {
		for _, d := range set[p] {
			total++
			if limit > 0 && n >= limit {
				continue
			}
			n++
			fmt.Fprintf(&b, "%s:%d:%d: %s: %s", d.Path, d.Line, d.Column, d.Severity, text.OneLine(d.Message, maxRenderedMessage))
			if d.Source != "" {
				fmt.Fprintf(&b, " (%s)", d.Source)
			}
			b.WriteByte('\n')
		}
	}
	if total > n {
		fmt.Fprintf(&b, "(%d more omitted)\n", total-n)
	}
	return b.String()
}
