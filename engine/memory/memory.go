// Package memory is what Tally remembers between sessions, and only what
// the user reviewed: entries the model proposes (see [Propose]) wait for
// the user to accept, edit or reject them; accepted ones live in the
// project's .tally/memory.md or, for the user's preferences, in memory.md
// of the user's config folder. [Read] is the one reader of a memory file
// (this package's and the workspace MEMORY.md that compaction may use):
// confined to its folder, a regular file only, capped, secrets redacted.
// [Section] turns the two files into the system prompt's memory section,
// which the prompt reads once when a session starts, so accepting an entry
// never changes the prefix of a session already running. [Cost] is an
// entry's share of that prefix in tokens.
package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/tokens"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/safefile"
)

// Kind is what an entry remembers.
type Kind string

// The kinds of entries. Preferences are the user's and kept in the user's
// config folder; the others are the project's.
const (
	Build      Kind = "build"      // how to build, test, lint or run the project
	Convention Kind = "convention" // a convention of the codebase
	Pitfall    Kind = "pitfall"    // a trap hit once, and how to avoid it
	Preference Kind = "preference" // how the user likes to work, in every project
)

// Kinds lists the kinds in the order they are shown.
var Kinds = []Kind{Build, Convention, Pitfall, Preference}

// ParseKind reads a kind name (any letter case, spaces trimmed).
func ParseKind(s string) (Kind, error) {
	k := Kind(strings.ToLower(strings.TrimSpace(s)))
	for _, v := range Kinds {
		if k == v {
			return k, nil
		}
	}
	return "", fmt.Errorf("%q is not a kind of memory; use build, convention, pitfall or preference", s)
}

// User reports whether entries of k live in the user's file, not the
// project's.
func (k Kind) User() bool { return k == Preference }

// Source is where an entry came from: a session and the user's turn in
// it (0 when the model named no turn of the session).
type Source struct {
	Session string `json:"session"`
	Turn    int    `json:"turn,omitempty"`
}

// String is "session ID, turn N" (without the turn when it is unknown).
func (s Source) String() string {
	if s.Turn <= 0 {
		return "session " + s.Session
	}
	return fmt.Sprintf("session %s, turn %d", s.Session, s.Turn)
}

// Entry is one memory entry: proposed and pending (with an ID), or read
// back from a memory file (ID 0, File set).
type Entry struct {
	ID     int    `json:"id,omitempty"`
	Kind   Kind   `json:"kind"`
	Text   string `json:"text"`
	Source Source `json:"source"`
	// Workspace is the project a pending entry was proposed in, whose
	// .tally/memory.md receives it unless it is a preference.
	Workspace string    `json:"workspace"`
	Proposed  time.Time `json:"proposed,omitzero"`
	// File is the memory file an accepted entry was read from.
	File string `json:"-"`
}

// MaxText is the longest entry text kept, in characters.
const MaxText = 400

// Clean is text as an entry holds it: one line, spaces collapsed, secrets
// redacted and engine tags defused, so an entry can neither carry a key
// into the prompt nor open an engine block. It reports an error for text
// that is empty or longer than MaxText.
func Clean(text string) (string, error) {
	s := strings.Join(strings.Fields(text), " ")
	s, _ = secrets.Redact(s)
	s = transcript.NeutralizeLine(s)
	switch n := len([]rune(s)); {
	case n == 0:
		return "", errors.New("the entry's text is empty; write what should be remembered")
	case n > MaxText:
		return "", fmt.Errorf("the entry's text has %d characters, more than %d; shorten it", n, MaxText)
	}
	return s, nil
}

// Files of the memory.
const (
	// FileName is the memory file's name, in ProjectDir of a workspace
	// and in the user's config folder.
	FileName = "memory.md"
	// ProjectDir is the workspace folder of the project's memory file.
	ProjectDir = ".tally"
	// MaxFileBytes caps what is read of each memory file.
	MaxFileBytes = 16 << 10
)

// ProjectFile is the path of workspace's memory file.
func ProjectFile(workspace string) string {
	return filepath.Join(workspace, ProjectDir, FileName)
}

// UserFile is the path of the user's memory file in the config folder
// userDir, "" when userDir is.
func UserFile(userDir string) string {
	if userDir == "" {
		return ""
	}
	return filepath.Join(userDir, FileName)
}

// FileFor is the file an accepted e goes to: the user's (in userDir) for
// a preference, its workspace's otherwise.
func FileFor(e Entry, userDir string) (string, error) {
	if e.Kind.User() {
		if userDir == "" {
			return "", errors.New("the user's config folder is unknown, so a preference cannot be kept; set XDG_CONFIG_HOME")
		}
		return UserFile(userDir), nil
	}
	if e.Workspace == "" {
		return "", errors.New("the entry names no workspace to remember it in; propose it again from a session")
	}
	return ProjectFile(e.Workspace), nil
}

// Read returns the file name (relative to dir) as the engine may use it:
// read only when it is a regular file inside dir (not a symlink, FIFO or
// device, never by a path leaving dir), at most limit bytes, invalid UTF-8
// replaced and secrets redacted; "" when it cannot be read. It is the one
// reader of memory files.
func Read(dir, name string, limit int64) string {
	if dir == "" {
		return ""
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return ""
	}
	defer root.Close()
	b, _, err := safefile.ReadIn(root, name, limit)
	if err != nil {
		return ""
	}
	text, _ := secrets.Redact(strings.ToValidUTF8(string(b), "\uFFFD"))
	return text
}

// sourceRe matches the source comment at the end of an entry's line.
var sourceRe = regexp.MustCompile(`\s*<!--\s*session\s+(\S+?)(?:,\s*turn\s+(\d+))?\s*-->\s*$`)

// kindRe matches the kind that opens an entry's line.
var kindRe = regexp.MustCompile(`^\[([a-zA-Z]+)\]\s*`)

// ParseFile reads the entries of a memory file's text: each line that is not
// blank, a heading or a comment is an entry, "- [kind] text <!-- session
// ID, turn N -->" in full (a line the user wrote by hand may lack the
// kind and the source).
func ParseFile(text, file string) []Entry {
	var out []Entry
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || (strings.HasPrefix(line, "<!--") && strings.HasSuffix(line, "-->")) {
			continue
		}
		e := Entry{File: file}
		if m := sourceRe.FindStringSubmatch(line); m != nil {
			e.Source.Session = m[1]
			e.Source.Turn, _ = strconv.Atoi(m[2])
			line = line[:len(line)-len(m[0])]
		}
		line = strings.TrimSpace(strings.TrimLeft(line, "-*+ "))
		if m := kindRe.FindStringSubmatch(line); m != nil {
			if k, err := ParseKind(m[1]); err == nil {
				e.Kind, line = k, line[len(m[0]):]
			}
		}
		e.Text = transcript.NeutralizeLine(strings.TrimSpace(line))
		if e.Text != "" {
			out = append(out, e)
		}
	}
	return out
}

// promptLine is e as the system prompt lists it: its kind and text,
// without the source.
func promptLine(e Entry) string {
	if e.Kind == "" {
		return "- " + e.Text + "\n"
	}
	return "- [" + string(e.Kind) + "] " + e.Text + "\n"
}

// fileLine is e as its memory file keeps it: the prompt's line with the
// source in a comment.
func fileLine(e Entry) string {
	line := strings.TrimSuffix(promptLine(e), "\n")
	if e.Source.Session != "" {
		line += " <!-- " + e.Source.String() + " -->"
	}
	return line + "\n"
}

// Cost is e's share of the prefix in tokens: the tokens of its line in the
// memory section (see Section), the same count for a pending entry and an
// accepted one.
func Cost(e Entry) int { return tokens.Count(promptLine(e)) }

// sectionHead opens the memory section of the system prompt.
const sectionHead = "# Memory\nThe user reviewed and accepted these notes from earlier sessions; rely on them unless the workspace shows otherwise.\n"

// HeadCost is the tokens the memory section's heading adds to the prefix
// once, when there is at least one entry.
func HeadCost() int { return tokens.Count(sectionHead) }

// Accepted reads the accepted entries of workspace's memory file and, when
// userDir is not "", the user's: the project's first.
func Accepted(workspace, userDir string) []Entry {
	var out []Entry
	if workspace != "" {
		out = append(out, ParseFile(Read(workspace, filepath.Join(ProjectDir, FileName), MaxFileBytes), ProjectFile(workspace))...)
	}
	if userDir != "" {
		out = append(out, ParseFile(Read(userDir, FileName, MaxFileBytes), UserFile(userDir))...)
	}
	return out
}

// Section is the system prompt's memory section for a session starting in
// workspace: the accepted entries of the project's file and the user's
// (see Accepted), one line each; "" when there are none. The prompt calls
// it once, when a session starts.
func Section(workspace, userDir string) string {
	entries := Accepted(workspace, userDir)
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(sectionHead)
	for _, e := range entries {
		b.WriteString(promptLine(e))
	}
	return strings.TrimRight(b.String(), "\n")
}

// fileHead opens a new memory file.
const fileHead = "# Tally memory\n\n<!-- Accepted in Tally's Memory panel or with `tally memory accept`. Each line below enters the system prompt of sessions started from now on; edit or delete lines freely. -->\n\n"

// Append adds the accepted e to the memory file path, made (with its
// folder) when missing; an entry whose kind and text the file already
// holds is not added twice. The text is cleaned again (see Clean), so an
// edit cannot write a secret. The file must be a regular file: a symlink
// put in its place is refused.
func Append(path string, e Entry) error {
	text, err := Clean(e.Text)
	if err != nil {
		return err
	}
	e.Text = text
	dir, name := filepath.Split(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("the memory folder %s could not be made (%w); check its permissions", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("the memory folder %s could not be opened (%w); check its permissions", dir, err)
	}
	defer root.Close()
	head := ""
	switch fi, err := root.Lstat(name); {
	case errors.Is(err, fs.ErrNotExist):
		head = fileHead
	case err != nil:
		return fmt.Errorf("the memory file %s could not be read (%w); check its permissions", path, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("the memory file %s is not a regular file; remove it or make it one", path)
	default:
		old := Read(dir, name, 4*MaxFileBytes)
		for _, o := range ParseFile(old, path) {
			if o.Kind == e.Kind && o.Text == e.Text {
				return nil
			}
		}
		if old != "" && !strings.HasSuffix(old, "\n") {
			head = "\n" // the file's last line has no end yet
		}
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("the memory file %s could not be opened for writing (%w); check its permissions", path, err)
	}
	if _, err = f.WriteString(head + fileLine(e)); err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("the entry could not be written to %s (%w); check the disk and try again", path, err)
	}
	return nil
}
