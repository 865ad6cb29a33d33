// Package trust fingerprints what a workspace configuration file runs, so
// that trusting the file covers the code it starts: the file itself, the
// whole .tally folder it lives in (anything there may be sourced or read),
// and every workspace file or folder its commands name — a named folder by
// every file under it, a named file inside a folder by that whole folder
// (the scripts beside it that it may source), a shell script at the
// workspace's root also by what its own commands name. Command lines are
// read with a real shell parser, and a relative name is taken from the
// folder an earlier `cd` moved to. A change to any of it changes the
// fingerprint, so the user is asked again. Names outside the workspace are
// left out: they are not the repository's to change. Past [MaxFiles] files
// or [MaxBytes] bytes nothing can be trusted: the error matches
// [ErrTooLarge]. A fingerprint taken with a [Watch] ([NewWatched]) can be
// checked again without reading a file: while [Watch.Unchanged] holds,
// every path it looked at has the same stamp, so it is the same.
package trust

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/tally-dev/tally/internal/shellword"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/tally-dev/tally/internal/safefile"
)

// Bounds of what one fingerprint may cover.
const (
	MaxFiles = 2000
	MaxBytes = 64 << 20
)

// Folder is the workspace folder Tally's workspace configuration lives
// in; a fingerprint always covers all of it.
const Folder = ".tally"

// maxScriptDepth bounds how far scripts naming scripts are followed.
const maxScriptDepth = 4

// ErrTooLarge is matched (errors.Is) when what a file runs exceeds
// [MaxFiles] or [MaxBytes].
var ErrTooLarge = errors.New("too many workspace files to trust")

// projectVars are the variables a command may spell the workspace with.
var projectVars = []string{"TALLY_PROJECT_DIR", "CLAUDE_PROJECT_DIR"}

// Print accumulates one fingerprint. Its methods add what a configuration
// runs; [Print.Sum] gives the hex SHA-256 of it all.
type Print struct {
	h      hash.Hash
	ws     string // the workspace as given
	real   string // the workspace with links resolved
	files  int64  // left of the budget
	bytes  int64
	hashed map[string]bool
	w      *Watch // records every lookup; nil records nothing
}

// New starts the fingerprint of the configuration file name (its content
// data) of workspace ws; it already covers the .tally folder.
func New(ws, name string, data []byte) (*Print, error) {
	return NewWatched(ws, name, data, nil)
}

// NewWatched is [New] with every path the fingerprint looks at — each
// file and folder it reads (looked up before it is read), each name it
// looks up that does not exist, each link it resolves — recorded in w, so
// that while w.Unchanged() holds the fingerprint is known to be the same
// without computing it again.
func NewWatched(ws, name string, data []byte, w *Watch) (*Print, error) {
	real, err := w.EvalSymlinks(ws)
	if err != nil {
		real = ws
	}
	p := &Print{h: sha256.New(), ws: ws, real: real, files: MaxFiles, bytes: MaxBytes, hashed: map[string]bool{}, w: w}
	p.field(name)
	p.field(string(data))
	if _, err := w.Lstat(filepath.Join(real, Folder)); err == nil {
		if err := p.path(Folder, 0); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Sum returns the fingerprint.
func (p *Print) Sum() string { return hex.EncodeToString(p.h.Sum(nil)) }

// Names adds every workspace path among names, each taken relative to
// the workspace (and "name=value" also by its value).
func (p *Print) Names(names ...string) error {
	for _, n := range names {
		if err := p.name("", n, 0); err != nil {
			return err
		}
		if _, v, ok := strings.Cut(n, "="); ok && v != "" {
			if err := p.name("", v, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// CommandLine adds what the shell command line line names, run from the
// workspace's root. A line the parser cannot read names nothing more than
// its plain words.
func (p *Print) CommandLine(line string) error {
	return p.commandLine("", line, 0)
}

func (p *Print) commandLine(dir, line string, depth int) error {
	f, err := shellword.Parse(line)
	if err != nil {
		return p.Names(strings.Fields(line)...)
	}
	var walkErr error
	syntax.Walk(f, func(n syntax.Node) bool {
		if walkErr != nil {
			return false
		}
		call, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		words := make([]string, 0, len(call.Args))
		for _, w := range call.Args {
			words = append(words, literal(w))
		}
		for _, a := range call.Assigns {
			if a.Value != nil {
				words = append(words, literal(a.Value))
			}
		}
		if len(words) >= 2 && words[0] == "cd" {
			// Later relative names are taken from where cd went; a cd
			// the parser cannot follow leaves the folder as it was.
			if rel, ok := p.rel(dir, words[1]); ok {
				dir = rel
			}
		}
		for _, w := range words {
			if err := p.name(dir, w, depth); err != nil {
				walkErr = err
				return false
			}
			if _, v, ok := strings.Cut(w, "="); ok && v != "" {
				if err := p.name(dir, v, depth); err != nil {
					walkErr = err
					return false
				}
			}
		}
		return true
	})
	return walkErr
}

// name adds the workspace path word names, from the workspace folder
// dir: a folder whole, a file with the folder it is in (or, at the root,
// a shell script with what it names).
func (p *Print) name(dir, word string, depth int) error {
	rel, ok := p.rel(dir, word)
	if !ok || rel == "." {
		// The workspace itself (`.` is also the source builtin) would
		// make every change ask again: it is never covered whole.
		return nil
	}
	full := filepath.Join(p.real, rel)
	fi, err := p.w.Stat(full)
	if err != nil {
		return nil // gone or unreadable: it runs the same way trusted or not
	}
	if fi.Mode().IsRegular() && filepath.Dir(rel) != "." {
		rel = filepath.Dir(rel)
	}
	if p.hashed[rel] {
		return nil
	}
	if err := p.path(rel, depth); err != nil {
		return err
	}
	if fi.Mode().IsRegular() && filepath.Dir(rel) == "." && depth < maxScriptDepth && isShellScript(full) {
		data, _, err := safefile.Read(full, MaxBytes)
		if err == nil {
			return p.commandLine("", string(data), depth+1)
		}
	}
	return nil
}

// rel returns word as a clean path relative to the workspace when, taken
// from the workspace folder dir, it names something inside it.
func (p *Print) rel(dir, word string) (string, bool) {
	for _, v := range projectVars {
		for _, spelled := range []string{"${" + v + "}", "$" + v} {
			if rest, ok := strings.CutPrefix(word, spelled); ok {
				word = p.real + rest
			}
		}
	}
	if word == "" || strings.ContainsRune(word, 0) || strings.ContainsAny(word, "$*?") {
		return "", false
	}
	switch {
	case !filepath.IsAbs(word):
		word = filepath.Join(p.real, dir, word)
	default:
		if r, err := filepath.Rel(p.ws, word); err == nil && filepath.IsLocal(r) {
			word = filepath.Join(p.real, r)
		}
	}
	r, err := filepath.Rel(p.real, filepath.Clean(word))
	if err != nil || !filepath.IsLocal(r) {
		return "", false
	}
	if r == "." {
		return r, true // the workspace itself, which is never covered whole
	}
	if _, err := p.w.Lstat(filepath.Join(p.real, r)); err != nil {
		return "", false
	}
	return r, true
}

// path adds rel: a symlink by its target and what it leads to inside the
// workspace, a regular file by its content, a folder by every entry under
// it (.git folders skipped), anything else by its kind.
func (p *Print) path(rel string, depth int) error {
	if p.hashed[rel] {
		return nil
	}
	p.hashed[rel] = true
	full := filepath.Join(p.real, rel)
	fi, err := p.w.Lstat(full) // before the read, so a later change shows in the stamp
	if err != nil {
		return err
	}
	p.field("path")
	p.field(filepath.ToSlash(rel))
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(full)
		if err != nil {
			return err
		}
		p.field("symlink")
		p.field(target)
		if err := p.take(0); err != nil {
			return err // the budget ends a loop of links
		}
		dest, err := p.w.EvalSymlinks(full)
		if err != nil {
			return nil // a dangling link counts by its target
		}
		destRel, ok := p.rel("", dest)
		if !ok {
			return nil // outside the workspace
		}
		return p.path(destRel, depth)
	}
	switch {
	case fi.Mode().IsRegular():
		return p.file(full)
	case fi.IsDir():
		return p.dir(rel, depth)
	}
	p.field("special " + fi.Mode().Type().String())
	return nil
}

func (p *Print) file(full string) error {
	data, cut, err := safefile.Read(full, p.bytes)
	if err != nil {
		return err
	}
	if err := p.take(int64(len(data))); err != nil || cut {
		return ErrTooLarge
	}
	p.field("file")
	p.field(string(data))
	return nil
}

func (p *Print) dir(rel string, depth int) error {
	root := filepath.Join(p.real, rel)
	var paths []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			// Stamped before its entries are listed: an entry added,
			// removed or renamed later changes the folder's stamp.
			if _, err := p.w.Lstat(path); err != nil {
				return err
			}
		}
		if !d.IsDir() {
			if len(paths) >= int(p.files) {
				return ErrTooLarge
			}
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(paths)
	for _, path := range paths {
		r, _ := filepath.Rel(p.real, path)
		p.field("entry")
		if err := p.path(r, depth); err != nil {
			return err
		}
	}
	return nil
}

func (p *Print) take(n int64) error {
	p.files--
	p.bytes -= n
	if p.files < 0 || p.bytes < 0 {
		return ErrTooLarge
	}
	return nil
}

// field adds s with its length, so fields cannot run together.
func (p *Print) field(s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	p.h.Write(n[:])
	p.h.Write([]byte(s))
}

// TooLarge wraps ErrTooLarge in a sentence naming what could not be
// trusted and what to do.
func TooLarge(what, file string) error {
	return fmt.Errorf("%s names more than %d workspace files or %d MB, so %s cannot be trusted; point it at its script file instead: %w", what, MaxFiles, MaxBytes>>20, file, ErrTooLarge)
}

// literal returns the word with quotes removed; a part the shell computes
// is kept as "$", so the word names no file unless the part is one of
// projectVars.
func literal(w *syntax.Word) string {
	var b strings.Builder
	var parts func(ps []syntax.WordPart, quoted bool)
	parts = func(ps []syntax.WordPart, quoted bool) {
		for _, part := range ps {
			switch x := part.(type) {
			case *syntax.Lit:
				b.WriteString(shellword.Unescape(x.Value, quoted))
			case *syntax.SglQuoted:
				b.WriteString(x.Value)
			case *syntax.DblQuoted:
				parts(x.Parts, true)
			case *syntax.ParamExp:
				if x.Param != nil && slices.Contains(projectVars, x.Param.Value) && x.Exp == nil && x.Repl == nil && !x.Length {
					b.WriteString("${" + x.Param.Value + "}")
				} else {
					b.WriteString("$")
				}
			default:
				b.WriteString("$")
			}
		}
	}
	parts(w.Parts, false)
	return b.String()
}

// isShellScript reports whether the file at full is a shell script: a
// .sh or .bash name, or a #! line naming a shell.
func isShellScript(full string) bool {
	if ext := filepath.Ext(full); ext == ".sh" || ext == ".bash" {
		return true
	}
	head, _, err := safefile.Read(full, 128)
	if err != nil || !strings.HasPrefix(string(head), "#!") {
		return false
	}
	line, _, _ := strings.Cut(string(head), "\n")
	for _, sh := range []string{"/sh", "/bash", "/dash", "/zsh", "env sh", "env bash"} {
		if strings.Contains(line, sh) {
			return true
		}
	}
	return false
}
