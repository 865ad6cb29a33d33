package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/tally-dev/tally/internal/frontmatter"
)

// Command files: prompt templates in the user's commands folder
// (~/.config/tally/commands/NAME.md) and the workspace's
// (.tally/commands/NAME.md, and .claude/commands/NAME.md as Claude Code
// keeps them). A file's name is the command's; a subfolder is its
// namespace (frontend/component.md is /frontend:component). Its YAML
// header may give a description and an argument-hint; other fields
// (allowed-tools, model …) are ignored. Its body is the text the command
// stands for: $ARGUMENTS is replaced by the arguments as typed, $1 … $9
// by the words among them (quoted as a shell would), and a body with
// neither gets the arguments after a blank line. "!`command`" lines and
// "@file" references stay text: nothing in a template is run, and the
// agent reads the files it names itself.
//
// A name in an earlier folder hides it in a later one: the user's before
// the workspace's, .tally/commands before .claude/commands. The expanded
// text becomes the user's own message, which the user sees and sends, so
// a workspace's commands need no trust; it goes through the same
// redaction and intake as anything typed. The folders are read afresh
// each time (they are small), through os.Root so that no link leads a
// read out of its folder; only regular .md files of at most
// MaxFileBytes are read.

// The limits of reading command files.
const (
	MaxFileBytes    = 64 << 10 // one file
	maxCommandFiles = 500      // the .md files of one folder
	maxCommandDepth = 3        // subfolders below a commands folder
)

// commandDir is one folder of command files.
type commandDir struct {
	source Source
	// base is the folder opened first and rel the commands folder inside
	// it: the user's commands folder itself (rel ""), or the workspace and
	// ".tally/commands", so that a link there cannot leave the workspace.
	base, rel string
	shown     string // the folder as the user knows it, for File and notes
}

// open opens the folder; a folder that is not there is (nil, nil).
func (d commandDir) open() (*os.Root, error) {
	if d.base == "" {
		return nil, nil
	}
	root, err := os.OpenRoot(d.base)
	if err != nil || d.rel == "" {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return root, err
	}
	defer root.Close()
	sub, err := root.OpenRoot(d.rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return sub, err
}

// Files is the registry's source of command files, from its
// folders in order.
type Files struct{ dirs []commandDir }

// Folders returns the command folders of userConfigDir (the user's
// Tally folder, ~/.config/tally) and workspace, in their order; either may
// be "".
func Folders(userConfigDir, workspace string) Files {
	var f Files
	if userConfigDir != "" {
		dir := filepath.Join(userConfigDir, "commands")
		f.dirs = append(f.dirs, commandDir{source: SourceUser, base: dir, shown: homeShort(dir)})
	}
	if workspace != "" {
		for _, rel := range []string{".tally/commands", ".claude/commands"} {
			f.dirs = append(f.dirs, commandDir{source: SourceWorkspace, base: workspace, rel: filepath.FromSlash(rel), shown: rel})
		}
	}
	return f
}

// List returns the commands a session in workspace would offer,
// with userConfigDir as its Config.UserConfigDir, leaving out the MCP
// servers' prompts (which need the session's servers): the built-in
// commands and the command files, sorted by name, and the notes of
// Commands.Notes. It reads only the folders.
func List(userConfigDir, workspace string) ([]Command, []string) {
	f := Folders(userConfigDir, workspace)
	cmds, notes := f.Scan()
	reg := Registry{Sources: []Provider{builtinCommands{}, staticCommands(cmds)}}
	return reg.List(context.Background()), notes
}

// staticCommands is a source of commands already read, for listing.
type staticCommands []Command

func (s staticCommands) List(context.Context) []Command { return s }

func (s staticCommands) Lookup(_ context.Context, name string) (Command, bool) {
	i := slices.IndexFunc(s, func(c Command) bool { return c.Name == name })
	if i < 0 {
		return Command{}, false
	}
	return s[i], true
}

func (staticCommands) Expand(context.Context, Command, string, func(string) bool) (string, error) {
	return "", errors.New("this list is for showing only")
}

func (f Files) List(context.Context) []Command {
	cmds, _ := f.Scan()
	return cmds
}

// scan reads every folder and returns its commands, sorted by name, each
// name once (the first folder's), and the notes of what could not be
// used.
func (f Files) Scan() ([]Command, []string) {
	var cmds []Command
	var notes []string
	seen := map[string]bool{}
	for _, d := range f.dirs {
		got, dnotes := d.Scan()
		for _, c := range got {
			if _, isBuiltin := (builtinCommands{}).Lookup(context.Background(), c.Name); isBuiltin {
				notes = append(notes, fmt.Sprintf("%s is hidden by the built-in command /%s; rename it to use it", c.File, c.Name))
				continue
			}
			if c.Problem != "" {
				notes = append(notes, c.File+": "+c.Problem)
			}
			if !seen[c.Name] {
				seen[c.Name] = true
				cmds = append(cmds, c)
			}
		}
		notes = append(notes, dnotes...)
	}
	slices.SortFunc(cmds, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return cmds, notes
}

// scan reads the command files of d, with the notes of the files and
// subfolders it left out.
func (d commandDir) Scan() ([]Command, []string) {
	root, err := d.open()
	if err != nil {
		return nil, []string{fmt.Sprintf("the commands folder %s cannot be read (%s); its commands are left out", d.shown, cmdOneLine(err.Error()))}
	}
	if root == nil {
		return nil, nil
	}
	defer root.Close()
	var cmds []Command
	var notes []string
	files := 0
	walk := func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				notes = append(notes, fmt.Sprintf("the commands folder %s cannot be read (%s); its commands are left out", d.shown, cmdOneLine(err.Error())))
				return fs.SkipAll
			}
			notes = append(notes, fmt.Sprintf("%s/%s cannot be read (%s); it is left out", d.shown, p, cmdOneLine(err.Error())))
			return nil
		}
		if p == "." {
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if strings.Count(p, "/") >= maxCommandDepth {
				notes = append(notes, fmt.Sprintf("%s/%s is nested more than %d folders deep; move its files up to use them", d.shown, p, maxCommandDepth))
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(e.Name(), ".md") {
			return nil
		}
		if files++; files > maxCommandFiles {
			notes = append(notes, fmt.Sprintf("the commands folder %s has more than %d files; the rest are left out", d.shown, maxCommandFiles))
			return fs.SkipAll
		}
		name, ok := commandName(p)
		if !ok {
			notes = append(notes, fmt.Sprintf("%s/%s is not read: a command's name and folders may hold only letters, digits, '-', '_' and '.'; rename it", d.shown, p))
			return nil
		}
		c, _ := d.read(root, p, name)
		cmds = append(cmds, c)
		return nil
	}
	_ = fs.WalkDir(root.FS(), ".", walk)
	return cmds, notes
}

func (f Files) Lookup(_ context.Context, name string) (Command, bool) {
	rel, ok := commandPath(name)
	if !ok {
		return Command{}, false
	}
	for _, d := range f.dirs {
		root, err := d.open()
		if err != nil || root == nil {
			continue
		}
		_, statErr := root.Lstat(filepath.FromSlash(rel))
		if statErr != nil {
			root.Close()
			continue
		}
		c, body := d.read(root, rel, name)
		root.Close()
		c.body = body
		return c, true
	}
	return Command{}, false
}

func (f Files) Expand(_ context.Context, c Command, rest string, skip func(string) bool) (string, error) {
	return expandTemplate(c, rest, skip)
}

// read reads the command file rel of d: the command, with its Problem set
// when the file cannot be used, and its body.
func (d commandDir) read(root *os.Root, rel, name string) (Command, string) {
	c := Command{Name: name, Source: d.source, File: d.shown + "/" + rel}
	data, err := readCommandFile(root, filepath.FromSlash(rel))
	if err != nil {
		c.Problem = err.Error()
		return c, ""
	}
	h, body, err := parseCommandHeader(data)
	if err != nil {
		c.Problem = err.Error()
		return c, ""
	}
	body = strings.ToValidUTF8(body, "\uFFFD")
	c.Description = strings.Join(strings.Fields(string(h.Description)), " ")
	if c.Description == "" {
		c.Description = cmdFirstLine(body)
	}
	c.Hint = strings.Join(strings.Fields(string(h.ArgumentHint)), " ")
	return c, body
}

// readCommandFile reads a command file of at most MaxFileBytes: a
// regular file, or a link to one inside the root.
func readCommandFile(root *os.Root, rel string) ([]byte, error) {
	fi, err := root.Lstat(rel)
	if err != nil {
		return nil, fmt.Errorf("it cannot be read (%s); check its permissions", cmdOneLine(err.Error()))
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if fi, err = root.Stat(rel); err != nil {
			return nil, errors.New("it is a link that leads outside its commands folder or to nothing; copy the file there instead")
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("it is not a regular file; make it one or remove it")
	}
	if fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("it is over %d KB; shorten it", MaxFileBytes>>10)
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("it cannot be read (%s); check its permissions", cmdOneLine(err.Error()))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("it cannot be read (%s); check the file", cmdOneLine(err.Error()))
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("it is over %d KB; shorten it", MaxFileBytes>>10)
	}
	return data, nil
}

// commandName is the command of the file at slash path p ("a/b.md" is
// "a:b"), and whether each part is a valid name.
func commandName(p string) (string, bool) {
	parts := strings.Split(strings.TrimSuffix(p, ".md"), "/")
	for _, part := range parts {
		if !validCommandPart(part) {
			return "", false
		}
	}
	return strings.Join(parts, ":"), true
}

// commandPath is the slash path of the file of command name, and whether
// name can be one.
func commandPath(name string) (string, bool) {
	parts := strings.Split(name, ":")
	if len(parts) > maxCommandDepth+1 {
		return "", false
	}
	for _, part := range parts {
		if !validCommandPart(part) {
			return "", false
		}
	}
	return path.Join(parts...) + ".md", true
}

// validCommandPart reports whether s can be a command's name or folder:
// 1 to 64 letters, digits, '-', '_' and '.', not starting with '.' or '-'.
func validCommandPart(s string) bool {
	if s == "" || utf8.RuneCountInString(s) > 64 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' && r != '.' {
			return false
		}
	}
	return true
}

// commandHeader is the header of a command file; the fields it does not
// name are ignored.
type commandHeader struct {
	Description  headerText `yaml:"description"`
	ArgumentHint headerText `yaml:"argument-hint"`
}

// headerText is a header field holding text. A YAML list is taken as the
// bracketed hint it was meant as: "argument-hint: [message]" is
// "[message]".
type headerText string

// UnmarshalYAML implements yaml.Unmarshaler.
func (t *headerText) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*t = headerText(n.Value)
		return nil
	case yaml.SequenceNode:
		var parts []string
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: expected text", item.Line)}}
			}
			parts = append(parts, "["+item.Value+"]")
		}
		*t = headerText(strings.Join(parts, " "))
		return nil
	}
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: expected text", n.Line)}}
}

// parseCommandHeader splits a command file into its header and body. A
// header written as Claude Code accepts it, with plain values YAML would
// reject ("argument-hint: [pr] [focus]", "description: Fix: a bug"), is
// read with those values taken as text.
func parseCommandHeader(data []byte) (commandHeader, string, error) {
	var h commandHeader
	body, err := frontmatter.Parse(data, &h)
	if err == nil {
		return h, body, nil
	}
	if fixed, changed := quoteHeaderValues(data); changed {
		var h2 commandHeader
		if body2, err2 := frontmatter.Parse(fixed, &h2); err2 == nil {
			return h2, body2, nil
		}
	}
	return commandHeader{}, "", err
}

// cmdHeaderLine is a header line "key: value" at the top level.
var cmdHeaderLine = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_-]*):[ \t]+(\S.*?)[ \t]*(\r?)$`)

// quoteHeaderValues returns data with the plain value of every top-level
// "key: value" line of its header double-quoted, and whether any was.
func quoteHeaderValues(data []byte) ([]byte, bool) {
	lines := strings.SplitAfter(strings.TrimPrefix(string(data), "\ufeff"), "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "---" {
		return nil, false
	}
	changed := false
	for i := 1; i < len(lines); i++ {
		line := strings.TrimSuffix(lines[i], "\n")
		if t := strings.TrimSpace(line); t == "---" || t == "..." {
			break
		}
		m := cmdHeaderLine.FindStringSubmatch(line)
		if m == nil || strings.ContainsAny(m[2][:1], "\"'|>#") {
			continue
		}
		lines[i] = m[1] + ": " + strconv.Quote(m[2]) + m[3] + strings.TrimPrefix(lines[i], line)
		changed = true
	}
	return []byte(strings.Join(lines, "")), changed
}

// expandTemplate is the text of command file c with the arguments typed
// after its name (rest): see the file's comment. Words for which skip
// reports true (the attachments) are not among $1 … $9.
func expandTemplate(c Command, rest string, skip func(string) bool) (string, error) {
	args := strings.TrimSpace(rest)
	body := c.body
	hasAll := strings.Contains(body, "$ARGUMENTS")
	hasPos := positionalRE.MatchString(body)
	if !hasAll && !hasPos {
		if args == "" {
			return body, nil
		}
		return strings.TrimRight(body, " \t\r\n") + "\n\n" + args, nil
	}
	var words []string
	if hasPos {
		ws, err := splitWords(args)
		if err != nil {
			return "", Errorf("the arguments of /%s %s; quote a value with spaces as \"two words\"", c.Name, err.Error())
		}
		for _, w := range ws {
			if skip == nil || !skip(w) {
				words = append(words, w)
			}
		}
	}
	var b strings.Builder
	for i := 0; i < len(body); {
		switch {
		case strings.HasPrefix(body[i:], "$ARGUMENTS"):
			b.WriteString(args)
			i += len("$ARGUMENTS")
		case body[i] == '$' && i+1 < len(body) && body[i+1] >= '1' && body[i+1] <= '9' && (i+2 >= len(body) || body[i+2] < '0' || body[i+2] > '9'):
			if n := int(body[i+1] - '1'); n < len(words) {
				b.WriteString(words[n])
			}
			i += 2
		default:
			b.WriteByte(body[i])
			i++
		}
	}
	return b.String(), nil
}

// positionalRE finds a $1 … $9 not followed by another digit.
var positionalRE = regexp.MustCompile(`\$[1-9]([^0-9]|$)`)

// cmdFirstLine is the first non-empty line of s, clipped, as the description
// of a command file whose header gives none.
func cmdFirstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(strings.TrimLeft(line, "# \t")); line != "" {
			if r := []rune(line); len(r) > 100 {
				return string(r[:99]) + "…"
			}
			return line
		}
	}
	return ""
}

// cmdOneLine is s on one line, without a final period.
func cmdOneLine(s string) string {
	return strings.TrimSuffix(strings.Join(strings.Fields(s), " "), ".")
}

// homeShort writes dir under the home folder as "~/…".
func homeShort(dir string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.ToSlash(dir)
	}
	if rel, err := filepath.Rel(home, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "~/" + filepath.ToSlash(rel)
	}
	return filepath.ToSlash(dir)
}
