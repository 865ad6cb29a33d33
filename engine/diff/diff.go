// Package diff computes line-based unified diffs of workspace files and
// applies a chosen subset of their hunks.
//
// Diffs are computed line by line with the longest-common-subsequence
// algorithm of github.com/aymanbagabas/go-udiff (the one gopls uses) and
// grouped into hunks with [ContextLines] lines of context, as unified diffs
// are. Lines are compared with their line ending,
// so a change from LF to CRLF is a change; a last line without a newline is
// marked as such, as `diff -u` does.
//
// The package guarantees that [Apply] with every hunk accepted reproduces the
// after-content byte for byte, that with no hunk accepted it reproduces the
// before-content, and that any other subset writes exactly the accepted hunks
// and keeps the text of the rejected ones as it was. Files that are not text
// (a NUL byte or invalid UTF-8) or are larger than [MaxBytes] are reported as
// such and not diffed. Nothing in the package panics on file contents.
package diff

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// ContextLines is the number of unchanged lines shown around each change.
const ContextLines = 3

// MaxBytes is the size of either side above which a file is not diffed line
// by line (the diff's cost grows with the square of the line count in the
// worst case); such a diff has TooLarge set and no hunks.
const MaxBytes = 4 << 20

// Kind says what a line of a hunk does.
type Kind uint8

// The kinds of hunk lines.
const (
	Context Kind = iota // an unchanged line, shown for context
	Add                 // a line only in the after-content
	Remove              // a line only in the before-content
)

// String returns the unified-diff prefix of k: " ", "+" or "-".
func (k Kind) String() string {
	switch k {
	case Add:
		return "+"
	case Remove:
		return "-"
	}
	return " "
}

// Line is one line of a hunk. Text has no line ending; EOL is the line's
// ending as in the file: "\n", "\r\n" or "" for a last line without one.
// OldNo and NewNo are 1-based line numbers on each side, 0 on the side the
// line is not part of.
type Line struct {
	Kind  Kind
	Text  string
	EOL   string
	OldNo int
	NewNo int
}

// Hunk is one group of changes with its context. OldStart/OldLines and
// NewStart/NewLines are the numbers of its `@@ -a,b +c,d @@` header: a start
// is the 1-based first line, or the line before the hunk when it has no line
// on that side.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Lines              []Line
}

// Header returns the hunk's `@@ -a,b +c,d @@` line, with ",1" left out as in
// standard unified diffs.
func (h Hunk) Header() string {
	return "@@ -" + rangeText(h.OldStart, h.OldLines) + " +" + rangeText(h.NewStart, h.NewLines) + " @@"
}

func rangeText(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}

// oldFrom returns the 0-based index of the hunk's first old line.
func (h Hunk) oldFrom() int {
	if h.OldLines == 0 {
		return h.OldStart
	}
	return h.OldStart - 1
}

// Diff is the difference between two versions of one file. New means the
// file did not exist before, Deleted that it does not exist after. Binary and
// TooLarge diffs have no hunks; an empty Hunks otherwise means no change in
// content.
type Diff struct {
	Path     string
	New      bool
	Deleted  bool
	Binary   bool
	TooLarge bool
	Hunks    []Hunk
}

// Changed reports whether the diff shows any change, including the creation
// or deletion of an empty file and changes not shown because the file is
// binary or too large.
func (d Diff) Changed() bool {
	return d.New || d.Deleted || len(d.Hunks) > 0 || d.Binary || d.TooLarge
}

// Compute returns the diff from before to after for the file at path;
// existed says whether the file existed before (if not, before is ignored and
// the diff is a new file). It is the diff shown before write_file or
// edit_file runs.
func Compute(path string, before, after []byte, existed bool) Diff {
	return Between(path, before, after, existed, true)
}

// Between returns the diff from before to after for the file at path, where
// beforeExists and afterExists say whether the file exists on each side; a
// side that does not exist counts as empty.
func Between(path string, before, after []byte, beforeExists, afterExists bool) Diff {
	if !beforeExists {
		before = nil
	}
	if !afterExists {
		after = nil
	}
	d := Diff{Path: path, New: !beforeExists && afterExists, Deleted: beforeExists && !afterExists}
	if len(before) > MaxBytes || len(after) > MaxBytes {
		d.TooLarge = !bytes.Equal(before, after)
		return d
	}
	if IsBinary(before) || IsBinary(after) {
		d.Binary = !bytes.Equal(before, after)
		return d
	}
	a, b := SplitLines(before), SplitLines(after)
	for _, group := range grouped(opcodes(lcs.DiffLines(a, b), len(a), len(b)), ContextLines) {
		d.Hunks = append(d.Hunks, hunkOf(group, a, b))
	}
	return d
}

// opcode is one run of a diff: lines a[I1:I2] become b[J1:J2]; Tag is 'e'
// (equal), 'r' (replaced), 'd' (deleted) or 'i' (inserted).
type opcode struct {
	Tag            byte
	I1, I2, J1, J2 int
}

// opcodes turns the replacements of lcs into runs covering both sides,
// the equal runs between them included.
func opcodes(diffs []lcs.Diff, na, nb int) []opcode {
	var out []opcode
	i, j := 0, 0
	for _, d := range diffs {
		if d.Start > i {
			out = append(out, opcode{'e', i, d.Start, j, j + d.Start - i})
		}
		tag := byte('r')
		switch {
		case d.End == d.Start:
			tag = 'i'
		case d.ReplEnd == d.ReplStart:
			tag = 'd'
		}
		out = append(out, opcode{tag, d.Start, d.End, d.ReplStart, d.ReplEnd})
		i, j = d.End, d.ReplEnd
	}
	if i < na || j < nb {
		out = append(out, opcode{'e', i, na, j, nb})
	}
	return out
}

// grouped cuts the runs into hunks, each change with up to n equal lines
// around it; changes closer than 2n lines share a hunk. Identical sides
// have no hunk.
func grouped(codes []opcode, n int) [][]opcode {
	if len(codes) == 0 || len(codes) == 1 && codes[0].Tag == 'e' {
		return nil
	}
	codes = append([]opcode(nil), codes...)
	if c := &codes[0]; c.Tag == 'e' {
		c.I1, c.J1 = max(c.I1, c.I2-n), max(c.J1, c.J2-n)
	}
	if c := &codes[len(codes)-1]; c.Tag == 'e' {
		c.I2, c.J2 = min(c.I2, c.I1+n), min(c.J2, c.J1+n)
	}
	var groups [][]opcode
	var group []opcode
	for _, c := range codes {
		if c.Tag == 'e' && c.I2-c.I1 > 2*n {
			group = append(group, opcode{'e', c.I1, min(c.I2, c.I1+n), c.J1, min(c.J2, c.J1+n)})
			groups = append(groups, group)
			group = nil
			c.I1, c.J1 = max(c.I1, c.I2-n), max(c.J1, c.J2-n)
		}
		group = append(group, c)
	}
	if len(group) > 0 && !(len(group) == 1 && group[0].Tag == 'e') {
		groups = append(groups, group)
	}
	return groups
}

// hunkOf turns one group of runs into a hunk.
func hunkOf(group []opcode, a, b []string) Hunk {
	first, last := group[0], group[len(group)-1]
	h := Hunk{
		OldStart: first.I1 + 1, OldLines: last.I2 - first.I1,
		NewStart: first.J1 + 1, NewLines: last.J2 - first.J1,
	}
	if h.OldLines == 0 {
		h.OldStart--
	}
	if h.NewLines == 0 {
		h.NewStart--
	}
	for _, c := range group {
		if c.Tag == 'e' {
			for k := 0; k < c.I2-c.I1; k++ {
				h.Lines = append(h.Lines, line(Context, a[c.I1+k], c.I1+k+1, c.J1+k+1))
			}
			continue
		}
		if c.Tag == 'r' || c.Tag == 'd' {
			for i := c.I1; i < c.I2; i++ {
				h.Lines = append(h.Lines, line(Remove, a[i], i+1, 0))
			}
		}
		if c.Tag == 'r' || c.Tag == 'i' {
			for j := c.J1; j < c.J2; j++ {
				h.Lines = append(h.Lines, line(Add, b[j], 0, j+1))
			}
		}
	}
	return h
}

func line(k Kind, raw string, oldNo, newNo int) Line {
	text, eol := raw, ""
	switch {
	case strings.HasSuffix(raw, "\r\n"):
		text, eol = raw[:len(raw)-2], "\r\n"
	case strings.HasSuffix(raw, "\n"):
		text, eol = raw[:len(raw)-1], "\n"
	}
	return Line{Kind: k, Text: text, EOL: eol, OldNo: oldNo, NewNo: newNo}
}

// SplitLines splits content into lines that keep their line endings; the
// last line has none if the content does not end with a newline. Joining the
// result gives content back.
func SplitLines(content []byte) []string {
	if len(content) == 0 {
		return nil
	}
	s := string(content)
	lines := make([]string, 0, bytes.Count(content, []byte{'\n'})+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// IsBinary reports whether content is not diffable text: it holds a NUL byte
// or is not valid UTF-8.
func IsBinary(content []byte) bool {
	return bytes.IndexByte(content, 0) >= 0 || !utf8.Valid(content)
}

// Unified returns the diff as standard unified-diff text with `--- a/path`
// and `+++ b/path` headers (`/dev/null` for a side that does not exist) and
// `\ No newline at end of file` markers. A binary or too large diff is one
// line saying so; a diff without changes is empty.
func (d Diff) Unified() string {
	if !d.Changed() {
		return ""
	}
	var sb strings.Builder
	from, to := "a/"+d.Path, "b/"+d.Path
	if d.New {
		from = "/dev/null"
	}
	if d.Deleted {
		to = "/dev/null"
	}
	if d.Binary || d.TooLarge {
		what := "Binary files"
		if d.TooLarge {
			what = "Files too large to diff,"
		}
		fmt.Fprintf(&sb, "%s %s and %s differ\n", what, from, to)
		return sb.String()
	}
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, to)
	for _, h := range d.Hunks {
		sb.WriteString(h.Header())
		sb.WriteByte('\n')
		for _, l := range h.Lines {
			sb.WriteString(l.Kind.String())
			sb.WriteString(l.Text)
			if l.EOL == "" {
				sb.WriteString("\n\\ No newline at end of file\n")
			} else {
				sb.WriteString(l.EOL)
			}
		}
	}
	return sb.String()
}

// Describe returns a one-line name of hunk i (0-based) of d for people and
// models, such as "hunk 2 of 3 (@@ -10,4 +10,6 @@)". An index out of range
// gives "hunk N of M (no such hunk)" rather than a panic.
func (d Diff) Describe(i int) string {
	if i < 0 || i >= len(d.Hunks) {
		return fmt.Sprintf("hunk %d of %d (no such hunk)", i+1, len(d.Hunks))
	}
	return fmt.Sprintf("hunk %d of %d (%s)", i+1, len(d.Hunks), d.Hunks[i].Header())
}

// Rejected returns the descriptions of the hunks not accepted, in order: the
// text a tool result gives the model so that it does not redo them blindly.
// A missing entry in accepted counts as rejected.
func (d Diff) Rejected(accepted []bool) []string {
	var out []string
	for i := range d.Hunks {
		if i >= len(accepted) || !accepted[i] {
			out = append(out, d.Describe(i))
		}
	}
	return out
}

// Apply returns before with exactly the accepted hunks of d applied and the
// text of the other hunks left as it was; accepted[i] is for d.Hunks[i] and a
// missing entry counts as rejected. before must be the content d was computed
// from; if its lines under a hunk differ, Apply returns an error and no
// content. Binary and too large diffs cannot be applied hunk by hunk.
func Apply(before []byte, d Diff, accepted []bool) ([]byte, error) {
	if d.Binary || d.TooLarge {
		return nil, fmt.Errorf("%s is not diffed text, so its change cannot be applied hunk by hunk; accept or reject the whole file", d.Path)
	}
	old := SplitLines(before)
	var out bytes.Buffer
	out.Grow(len(before))
	pos := 0
	for i, h := range d.Hunks {
		from := h.oldFrom()
		if from < pos || from+h.OldLines > len(old) {
			return nil, fmt.Errorf("%s of %s does not fit the file's %d lines; compute the diff again from the current content", d.Describe(i), d.Path, len(old))
		}
		for _, l := range old[pos:from] {
			out.WriteString(l)
		}
		k := from
		for _, l := range h.Lines {
			if l.Kind == Add {
				continue
			}
			if k >= len(old) || old[k] != l.Text+l.EOL {
				return nil, fmt.Errorf("line %d of %s no longer matches %s; compute the diff again from the current content", k+1, d.Path, d.Describe(i))
			}
			k++
		}
		take := i < len(accepted) && accepted[i]
		for _, l := range h.Lines {
			if (take && l.Kind != Remove) || (!take && l.Kind != Add) {
				out.WriteString(l.Text)
				out.WriteString(l.EOL)
			}
		}
		pos = from + h.OldLines
	}
	for _, l := range old[pos:] {
		out.WriteString(l)
	}
	return out.Bytes(), nil
}
