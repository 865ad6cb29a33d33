// Package diag runs quick checks on files an agent has just written and
// turns what they find into one compact block for the model.
//
// Checks are external commands chosen by file extension through [Rule]s;
// the default rule runs gofmt and go vet on Go files. Diagnostics are
// advisory: [Run] never fails and never blocks the agent for long. A checker
// that is not installed is skipped without a word, and one that crashes or
// runs past its timeout becomes a single line of the report. Each command
// runs in its own process group, which is killed as a whole on timeout.
package diag

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/proc"
	"github.com/tally-dev/tally/internal/sandbox"
	"github.com/tally-dev/tally/internal/text"
)

// DefaultTimeout bounds each command when [Run] is given a timeout of zero
// or less.
const DefaultTimeout = 20 * time.Second

// Limits of the report text.
const (
	// MaxLines is the number of finding lines shown in [Report.Text];
	// the rest are counted in a closing line.
	MaxLines = 40
	// MaxBytes bounds the whole of [Report.Text], tags included.
	MaxBytes = 4096
	// MaxLineBytes is the number of bytes of one finding shown before it
	// is cut with "…".
	MaxLineBytes = 300
)

// captureLimit bounds the bytes kept from each output stream of a command.
const captureLimit = 64 << 10

// Placeholders expanded in [Command] arguments.
const (
	// File runs the command once per matching file and stands for its
	// workspace-relative, slash-separated path.
	File = "{file}"
	// Files, as a whole argument, stands for all matching files as
	// separate arguments; the command runs once.
	Files = "{files}"
	// PkgDir runs the command once per distinct directory of the matching
	// files and stands for that directory relative to the workspace ("."
	// for the root).
	PkgDir = "{pkgdir}"
)

// Command is one check run in the workspace directory.
type Command struct {
	// Name labels the command's findings, such as "go vet". Empty means
	// the base name of Args[0].
	Name string
	// Args is the command line. Args[0] is looked up on PATH; when it is
	// not found the command is skipped. The other arguments may use the
	// placeholders [File], [Files] and [PkgDir]; a command using none runs
	// once per call of [Run].
	Args []string
	// Explain, when set, is appended to every line the command writes to
	// standard output, for tools whose output is a bare list of paths
	// (gofmt -l prints the files that are not formatted). Standard error
	// is reported as written.
	Explain string
	// Env holds extra environment variables, "KEY=value".
	Env []string
	// Needs, when not empty, limits the command to files whose directory
	// or one of its parents inside the workspace holds one of these names
	// (go vet needs a go.mod).
	Needs []string
}

// Rule selects the commands run for written files with one extension.
type Rule struct {
	// Ext is the extension with its dot, such as ".go"; it is matched
	// case-sensitively.
	Ext string
	// Commands run in order for the matching files.
	Commands []Command
}

// DefaultRules returns the built-in rules, freshly allocated: for .go files,
// "gofmt -l" on the written files and "go vet" on each of their packages,
// the latter only inside a Go module or workspace and with GOTOOLCHAIN=local
// so a check never downloads a toolchain.
func DefaultRules() []Rule {
	return []Rule{{
		Ext: ".go",
		Commands: []Command{
			{Name: "gofmt", Args: []string{"gofmt", "-l", Files}, Explain: "file is not gofmt-formatted"},
			{Name: "go vet", Args: []string{"go", "vet", "./" + PkgDir}, Env: []string{"GOTOOLCHAIN=local"}, Needs: []string{"go.mod", "go.work"}},
		},
	}}
}

// Report is what the checks found.
type Report struct {
	// Findings holds one line per problem, in a deterministic order
	// (rule, command, then sorted file or directory), without duplicates
	// and with paths relative to the workspace. Each line starts with the
	// command's name, such as "gofmt: a.go: file is not gofmt-formatted".
	Findings []string
	// Text is "" when there are no findings; otherwise it is the findings
	// as one block for the model, "<diagnostics>\n...\n</diagnostics>", at
	// most MaxLines finding lines and MaxBytes bytes, with a closing line
	// saying how many lines were left out.
	Text string
}

// Run runs the commands of every rule matching one of paths and reports
// what they print. Paths may be workspace-relative (either separator) or
// absolute; paths outside the workspace and files that no longer exist are
// ignored. A nil rules means [DefaultRules]. Each command is bounded by
// timeout ([DefaultTimeout] when zero or less) and by ctx; when ctx ends,
// Run returns what it has found so far. Run never fails: problems running a
// check become findings, and missing checkers are skipped.
func Run(ctx context.Context, workspace string, paths []string, rules []Rule, timeout time.Duration) Report {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if rules == nil {
		rules = DefaultRules()
	}
	ws, err := filepath.Abs(workspace)
	if err != nil || workspace == "" {
		return Report{}
	}
	files := relFiles(ws, paths)
	r := &runner{ws: ws, timeout: timeout, found: make(map[string]bool), looked: make(map[string]string)}
	for _, rule := range rules {
		var match []string
		for _, f := range files {
			if rule.Ext != "" && path.Ext(f) == rule.Ext {
				match = append(match, f)
			}
		}
		if len(match) == 0 {
			continue
		}
		for _, c := range rule.Commands {
			if ctx.Err() != nil {
				return r.report()
			}
			r.command(ctx, c, match)
		}
	}
	return r.report()
}

// relFiles returns the sorted, deduplicated, slash-separated relative paths
// of the regular files among paths that lie inside ws.
func relFiles(ws string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" || strings.ContainsRune(p, 0) {
			continue
		}
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(ws, filepath.FromSlash(p))
		}
		rel, err := filepath.Rel(ws, filepath.Clean(abs))
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		fi, err := os.Stat(abs)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, filepath.ToSlash(rel))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

type runner struct {
	ws       string
	timeout  time.Duration
	findings []string
	found    map[string]bool
	looked   map[string]string // Args[0] -> resolved path, "" when missing
}

func (r *runner) add(line string) {
	if !r.found[line] {
		r.found[line] = true
		r.findings = append(r.findings, line)
	}
}

// command runs c for the matching files, once or once per target.
func (r *runner) command(ctx context.Context, c Command, files []string) {
	if len(c.Args) == 0 || c.Args[0] == "" {
		return
	}
	exe, ok := r.looked[c.Args[0]]
	if !ok {
		if p, err := exec.LookPath(c.Args[0]); err == nil {
			exe = p
		}
		r.looked[c.Args[0]] = exe
	}
	if exe == "" {
		return // not installed: skipped silently
	}
	name := c.Name
	if name == "" {
		name = filepath.Base(c.Args[0])
	}
	files = slices.DeleteFunc(slices.Clone(files), func(f string) bool { return !r.has(path.Dir(f), c.Needs) })
	if len(files) == 0 {
		return
	}
	perFile := slices.ContainsFunc(c.Args[1:], func(a string) bool { return strings.Contains(a, File) })
	perDir := slices.ContainsFunc(c.Args[1:], func(a string) bool { return strings.Contains(a, PkgDir) })
	switch {
	case perFile:
		for _, f := range files {
			if ctx.Err() != nil {
				return
			}
			r.runOne(ctx, name, exe, c, expand(c.Args[1:], f, path.Dir(f), files))
		}
	case perDir:
		var dirs []string
		for _, f := range files {
			dirs = append(dirs, path.Dir(f))
		}
		slices.Sort(dirs)
		for _, d := range slices.Compact(dirs) {
			if ctx.Err() != nil {
				return
			}
			var in []string
			for _, f := range files {
				if path.Dir(f) == d {
					in = append(in, f)
				}
			}
			r.runOne(ctx, name, exe, c, expand(c.Args[1:], "", d, in))
		}
	default:
		r.runOne(ctx, name, exe, c, expand(c.Args[1:], "", ".", files))
	}
}

// has reports whether dir (slash-separated, relative) or one of its parents
// inside the workspace holds one of names. No names means yes.
func (r *runner) has(dir string, names []string) bool {
	if len(names) == 0 {
		return true
	}
	for {
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(r.ws, filepath.FromSlash(dir), n)); err == nil {
				return true
			}
		}
		if dir == "." {
			return false
		}
		dir = path.Dir(dir)
	}
}

// expand substitutes the placeholders in args.
func expand(args []string, file, dir string, files []string) []string {
	out := make([]string, 0, len(args)+len(files))
	for _, a := range args {
		if a == Files {
			for _, f := range files {
				out = append(out, argPath(f))
			}
			continue
		}
		a = strings.ReplaceAll(a, File, argPath(file))
		a = strings.ReplaceAll(a, PkgDir, dir)
		out = append(out, a)
	}
	return out
}

// argPath keeps a path that starts with "-" from being read as a flag.
func argPath(p string) string {
	if strings.HasPrefix(p, "-") {
		return "./" + p
	}
	return p
}

// runOne runs one command line and records its findings.
func (r *runner) runOne(ctx context.Context, name, exe string, c Command, args []string) {
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, exe, args...)
	cmd.Dir = r.ws
	// Checkers see the same allow-listed environment as commands (no
	// provider keys or other secrets), and never fetch a toolchain a
	// repository's go.mod asks for.
	cmd.Env = append(sandbox.Environ(os.Environ(), nil), append([]string{"GOTOOLCHAIN=local"}, c.Env...)...)
	proc.StartInGroup(cmd)
	cmd.Cancel = func() error { return proc.KillGroup(cmd) }
	cmd.WaitDelay = time.Second
	var stdout, stderr capBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	proc.KillGroup(cmd) // anything the command left running in the background
	if ctx.Err() != nil {
		return // the caller gave up; say nothing
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		r.add(fmt.Sprintf("%s timed out after %s", name, r.timeout))
		return
	}
	n := len(r.findings)
	for _, line := range r.lines(stdout.Bytes()) {
		if c.Explain != "" {
			line += ": " + c.Explain
		}
		r.add(name + ": " + line)
	}
	for _, line := range r.lines(stderr.Bytes()) {
		r.add(name + ": " + line)
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		if len(r.findings) == n {
			r.add(fmt.Sprintf("%s exited with status %d and printed nothing", name, exitErr.ExitCode()))
		}
	default:
		r.add(fmt.Sprintf("%s could not be run (%v)", name, err))
	}
}

// lines splits output into trimmed, non-empty lines with workspace paths
// made relative. Lines starting with "# " (package headers from the go
// command) are dropped.
func (r *runner) lines(out []byte) []string {
	valid := strings.ToValidUTF8(string(out), "\uFFFD")
	prefixes := []string{r.ws + string(filepath.Separator)}
	if real, err := filepath.EvalSymlinks(r.ws); err == nil && real != r.ws {
		prefixes = append(prefixes, real+string(filepath.Separator))
	}
	var res []string
	for _, line := range strings.Split(valid, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "# ") {
			continue
		}
		for _, p := range prefixes {
			line = strings.ReplaceAll(line, p, "")
		}
		line = strings.TrimPrefix(line, "./")
		res = append(res, line)
	}
	return res
}

func (r *runner) report() Report {
	return Report{Findings: r.findings, Text: render(r.findings)}
}

// render formats findings as the bounded <diagnostics> block.
func render(findings []string) string {
	if len(findings) == 0 {
		return ""
	}
	const head, tail = "<diagnostics>\n", "</diagnostics>"
	// Room for the omission line, which is at most this long.
	const noteRoom = 48
	var b strings.Builder
	b.WriteString(head)
	shown := 0
	for _, f := range findings {
		line := text.ClipBytes(transcript.NeutralizeLine(f), MaxLineBytes) + "\n"
		if shown == MaxLines || b.Len()+len(line)+len(tail)+noteRoom > MaxBytes {
			break
		}
		b.WriteString(line)
		shown++
	}
	if rest := len(findings) - shown; rest > 0 {
		fmt.Fprintf(&b, "(%d more line%s omitted)\n", rest, text.S(rest))
	}
	b.WriteString(tail)
	return b.String()
}

// capBuffer keeps the first captureLimit bytes written to it and discards
// the rest.
type capBuffer struct {
	bytes.Buffer
}

func (c *capBuffer) Write(p []byte) (int, error) {
	if room := captureLimit - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
