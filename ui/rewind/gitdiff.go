package rewind

import (
	"regexp"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/diff"
	tw "github.com/tally-dev/tally/ui/widget"
)

// A worktree's changes come from git as one unified diff of every file
// (engine/worktree's Tree.Diff). They are read back into the engine's
// diffs here, so the worktree's Merge dialog draws them with the Changes
// view's diff widget: the same header, line numbers and colours.

// GitDiffView draws git's unified diff of several files, each with the
// Changes view's diff widget; text that is no diff shows as it is.
func GitDiffView(unified string) fyne.CanvasObject {
	diffs := ParseGitDiff(unified)
	if len(diffs) == 0 {
		return &widget.Label{Text: unified, TextStyle: fyne.TextStyle{Monospace: true}, Wrapping: fyne.TextWrapBreak}
	}
	box := container.NewVBox()
	for i := range diffs {
		if i > 0 {
			box.Add(widget.NewSeparator())
		}
		box.Add(tw.DiffView(&diffs[i], nil, nil))
	}
	return box
}

// hunkHeader matches "@@ -12,3 +12,4 @@" (a count of 1 may be left out).
var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// ParseGitDiff reads the output of `git diff` (without colour) into one
// diff per file, in its order: new and deleted files, binary files and
// renames (under their new name) included, each hunk's lines numbered
// from its header. Lines it does not know are left out.
func ParseGitDiff(unified string) []diff.Diff {
	var out []diff.Diff
	var d *diff.Diff
	var h *diff.Hunk // the hunk being read; nil in a file's header
	oldNo, newNo, oldLeft, newLeft := 0, 0, 0, 0
	for _, l := range strings.Split(unified, "\n") {
		if h != nil && oldLeft <= 0 && newLeft <= 0 {
			h = nil // the hunk has all its lines
		}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			out = append(out, diff.Diff{Path: gitHeaderPath(strings.TrimPrefix(l, "diff --git "))})
			d, h = &out[len(out)-1], nil
		case d == nil:
			// Before the first file: nothing of a diff.
		case h == nil:
			if hh, ok := parseHunkHeader(l); ok {
				d.Hunks = append(d.Hunks, hh)
				h = &d.Hunks[len(d.Hunks)-1]
				oldNo, newNo, oldLeft, newLeft = h.OldStart, h.NewStart, h.OldLines, h.NewLines
				continue
			}
			readFileHeader(d, l)
		case strings.HasPrefix(l, "+"):
			h.Lines = append(h.Lines, diff.Line{Kind: diff.Add, Text: l[1:], NewNo: newNo})
			newNo, newLeft = newNo+1, newLeft-1
		case strings.HasPrefix(l, "-"):
			h.Lines = append(h.Lines, diff.Line{Kind: diff.Remove, Text: l[1:], OldNo: oldNo})
			oldNo, oldLeft = oldNo+1, oldLeft-1
		case strings.HasPrefix(l, " ") || l == "":
			h.Lines = append(h.Lines, diff.Line{Kind: diff.Context, Text: strings.TrimPrefix(l, " "), OldNo: oldNo, NewNo: newNo})
			oldNo, newNo, oldLeft, newLeft = oldNo+1, newNo+1, oldLeft-1, newLeft-1
		}
		// "\ No newline at end of file": left out.
	}
	return out
}

// parseHunkHeader reads "@@ -12,3 +12,4 @@" (a count of 1 may be left
// out).
func parseHunkHeader(l string) (diff.Hunk, bool) {
	m := hunkHeader.FindStringSubmatch(l)
	if m == nil {
		return diff.Hunk{}, false
	}
	return diff.Hunk{OldStart: atoi(m[1]), OldLines: count(m[2]), NewStart: atoi(m[3]), NewLines: count(m[4])}, true
}

// readFileHeader notes what a line of a file's header says: a new or
// deleted file, a binary one, the new name of a renamed one.
func readFileHeader(d *diff.Diff, l string) {
	switch {
	case strings.HasPrefix(l, "new file mode"):
		d.New = true
	case strings.HasPrefix(l, "deleted file mode"):
		d.Deleted = true
	case strings.HasPrefix(l, "Binary files "):
		d.Binary = true
	case strings.HasPrefix(l, "rename to "):
		d.Path = unquote(strings.TrimPrefix(l, "rename to "))
	case strings.HasPrefix(l, "+++ ") && l != "+++ /dev/null":
		d.Path = strings.TrimPrefix(unquote(strings.TrimPrefix(l, "+++ ")), "b/")
	}
}

// gitHeaderPath is the file of a "diff --git a/P b/P" line: the new name,
// quoted or not.
func gitHeaderPath(rest string) string {
	if strings.HasPrefix(rest, `"`) {
		// "a/x y" "b/x y": the second quoted name.
		if i := strings.LastIndex(rest, ` "`); i > 0 {
			return strings.TrimPrefix(unquote(rest[i+1:]), "b/")
		}
	}
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// unquote takes off the quotes git puts around a name with unusual
// characters.
func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// count is a hunk header's line count: 1 when it is left out.
func count(s string) int {
	if s == "" {
		return 1
	}
	return atoi(s)
}
