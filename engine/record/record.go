// Package record computes the work record of a conversation: the files the
// agent changed, the commands it ran and how they ended, the builds and
// tests that failed and whether they passed since, the sub-agents it ran
// and the open checklist. The record is derived by code from tool calls
// and their results, never from what the model says about them, so it
// survives compaction whatever a summary keeps.
//
// The package is pure: it reads messages and returns values, touches no
// storage and keeps no state. Every function is deterministic: the same
// inputs give the same Record and the same rendered bytes, so a rendered
// record can sit in a cached prompt prefix.
package record

import (
	"slices"
)

// Change values of a [File].
const (
	// Created means the first write of the path in the record created it.
	Created = "created"
	// Changed means an existing file was edited or overwritten.
	Changed = "changed"
	// Deleted means a command that reliably removes files removed it
	// (see [FromLog]).
	Deleted = "deleted"
)

// Exit values of a [Command] that are not a process's exit status.
const (
	// ExitFailed is a command that failed without an exit status: it
	// timed out, was refused or denied, could not start, or its output
	// was cleared before the record was made.
	ExitFailed = -1
)

// Record is what the agent did, as computed by code. The zero value is an
// empty record. Slices are in a fixed, documented order so that Render is
// stable.
type Record struct {
	// Files lists each touched path once, in the order of first touch.
	Files []File `json:"files,omitempty"`
	// Commands lists each distinct command once (its last outcome):
	// failures first, then the rest; within each group the order is stable
	// (a merge moves a command between groups but never reorders a group).
	Commands []Command `json:"commands,omitempty"`
	// Checks lists the builds and tests that failed, in order of first
	// failure, and whether they passed since.
	Checks []Check `json:"checks,omitempty"`
	// Subagents lists the sub-agents run, oldest first.
	Subagents []Subagent `json:"subagents,omitempty"`
	// Checklist holds the open checklist items, one rendered line each
	// ("[ ] #2 text", "[~] #3 text"). The caller sets it; FromLog never
	// does.
	Checklist []string `json:"checklist,omitempty"`
}

// File is one path the agent wrote.
type File struct {
	Path string `json:"path"`
	// Change is Created, Changed or Deleted.
	Change string `json:"change"`
	// Added and Removed count the lines edit_file calls added and
	// removed, from their old and new text (lines common to both ends are
	// not counted), and the lines of a write_file that created the file.
	Added   int `json:"added,omitempty"`
	Removed int `json:"removed,omitempty"`
	// Rewrites counts write_file calls that replaced an existing file
	// whole; what they removed is not known. Lines is the line count the
	// last whole-file write left, 0 when there was none.
	Rewrites int `json:"rewrites,omitempty"`
	Lines    int `json:"lines,omitempty"`
	// Turns are the turns that touched the file, ascending, without
	// duplicates.
	Turns []int `json:"turns,omitempty"`
}

// Command is one distinct shell command (run_shell), by its text with runs
// of white space folded to one space.
type Command struct {
	Command string `json:"command"`
	// Exit is the exit status of its last run, or ExitFailed.
	Exit int `json:"exit"`
	// Turn is the turn of its last run.
	Turn int `json:"turn"`
	// Runs counts its runs.
	Runs int `json:"runs"`
}

// Failed reports whether the command's last run failed.
func (c Command) Failed() bool { return c.Exit != 0 }

// Check is a build or test command (see [IsCheck]) that failed at least
// once.
type Check struct {
	Command string `json:"command"`
	// FailedTurn is the turn of its last failure.
	FailedTurn int `json:"failed_turn"`
	// PassedSince is true when the same command exited 0 after that
	// failure.
	PassedSince bool `json:"passed_since,omitempty"`
}

// Subagent is one sub-agent run (the task tool) with a one-line result.
type Subagent struct {
	Name   string `json:"name"`
	Result string `json:"result"`
	Turn   int    `json:"turn"`
}

// Empty reports whether r records nothing.
func (r Record) Empty() bool {
	return len(r.Files) == 0 && len(r.Commands) == 0 && len(r.Checks) == 0 &&
		len(r.Subagents) == 0 && len(r.Checklist) == 0
}

// Merge returns r updated by newer, a record of later messages: per key
// (a file's path, a command's text, a check's command) newer's outcome
// wins, counts add (lines, rewrites, runs) and turns are joined; keys keep
// the order r had them in, new keys follow in newer's order. A check of r
// that newer ran again with exit status 0 has passed since. Newer's
// checklist replaces r's when it is not nil. Neither r nor newer is
// modified.
func (r Record) Merge(newer Record) Record {
	out := Record{Checklist: r.Checklist}
	if newer.Checklist != nil {
		out.Checklist = newer.Checklist
	}
	out.Checklist = slices.Clone(out.Checklist)

	out.Files = cloneFiles(r.Files)
	for _, f := range newer.Files {
		k := slices.IndexFunc(out.Files, func(o File) bool { return o.Path == f.Path })
		if k < 0 {
			f.Turns = slices.Clone(f.Turns)
			out.Files = append(out.Files, f)
			continue
		}
		out.Files[k] = mergeFile(out.Files[k], f)
	}

	// For a command and a check the later turn wins, not the newer
	// record: a compaction merges the record of the messages it keeps
	// (a pinned old failure, say) over that of the ones it drops (a later
	// pass).
	var cmds []Command
	cmds = append(cmds, r.Commands...)
	for _, c := range newer.Commands {
		k := slices.IndexFunc(cmds, func(o Command) bool { return o.Command == c.Command })
		if k < 0 {
			cmds = append(cmds, c)
			continue
		}
		runs := cmds[k].Runs + c.Runs
		if c.Turn >= cmds[k].Turn {
			cmds[k] = c
		}
		cmds[k].Runs = runs
	}
	out.Commands = failuresFirst(cmds)

	out.Checks = slices.Clone(r.Checks)
	for _, ch := range newer.Checks {
		k := slices.IndexFunc(out.Checks, func(o Check) bool { return o.Command == ch.Command })
		switch {
		case k < 0:
			out.Checks = append(out.Checks, ch)
		case ch.FailedTurn >= out.Checks[k].FailedTurn:
			out.Checks[k] = ch
		}
	}
	// A check passed since it failed when the command's last run, at or
	// after the failure, exited 0.
	for k, ch := range out.Checks {
		if c, ok := find(out.Commands, ch.Command); ok && c.Turn >= ch.FailedTurn {
			out.Checks[k].PassedSince = c.Exit == 0
		}
	}

	out.Subagents = append(slices.Clone(r.Subagents), newer.Subagents...)
	return out
}

// mergeFile joins two records of one path, b the newer.
func mergeFile(a, b File) File {
	out := File{Path: a.Path, Change: b.Change, Added: a.Added + b.Added, Removed: a.Removed + b.Removed,
		Rewrites: a.Rewrites + b.Rewrites, Lines: a.Lines}
	if b.Rewrites > 0 {
		out.Lines = b.Lines
	}
	// A file created in the record and changed since is still new.
	if a.Change == Created && b.Change == Changed {
		out.Change = Created
	}
	out.Turns = joinTurns(a.Turns, b.Turns)
	return out
}

func joinTurns(a, b []int) []int {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

func cloneFiles(fs []File) []File {
	out := slices.Clone(fs)
	for i := range out {
		out[i].Turns = slices.Clone(out[i].Turns)
	}
	return out
}

// failuresFirst returns cmds with the failed ones first, each group in its
// original order.
func failuresFirst(cmds []Command) []Command {
	if len(cmds) == 0 {
		return nil
	}
	out := make([]Command, 0, len(cmds))
	for _, c := range cmds {
		if c.Failed() {
			out = append(out, c)
		}
	}
	for _, c := range cmds {
		if !c.Failed() {
			out = append(out, c)
		}
	}
	return out
}

func find(cmds []Command, command string) (Command, bool) {
	for _, c := range cmds {
		if c.Command == command {
			return c, true
		}
	}
	return Command{}, false
}
