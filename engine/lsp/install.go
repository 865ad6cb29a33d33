package lsp

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// versionsText lists the servers Tally installs and their pinned
// versions; scripts/deps.sh reads the same file.
//
//go:embed versions.txt
var versionsText string

// Installable is a language server Tally installs itself (see [Install]).
type Installable struct {
	// Name is the server's name, as in [Defaults].
	Name string
	// Tool is what installs it: "go" (go install) or "npm" (npm install).
	Tool string
	// Packages are the packages installed, each as path@version; the
	// first is the server's own.
	Packages []string
	// Command is the program the server runs, as in [Defaults].
	Command string
	// MinNode is the oldest major version of Node.js the server runs on;
	// 0 when it does not matter.
	MinNode int
}

// Version is the pinned version of the server's package ("v0.23.0").
func (i Installable) Version() string {
	_, v, _ := strings.Cut(i.Packages[0], "@")
	return v
}

// minNode is the oldest Node.js a server of versions.txt runs on, where
// that matters.
var minNode = map[string]int{"typescript-language-server": 20}

// Installables returns the servers Tally installs, in a fixed order:
// gopls, pyright and typescript-language-server.
func Installables() []Installable { return append([]Installable(nil), installables()...) }

// installables parses versionsText once.
var installables = sync.OnceValue(func() []Installable {
	var out []Installable
	sc := bufio.NewScanner(strings.NewReader(versionsText))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		i := Installable{Name: f[0], MinNode: minNode[f[0]]}
		if len(f) >= 3 {
			i.Tool, i.Packages = f[1], f[2:]
		}
		for _, d := range Defaults() {
			if d.Name == i.Name {
				i.Command = d.Command
			}
		}
		out = append(out, i)
	}
	return out
})

// LookupInstallable returns the server name of [Installables].
func LookupInstallable(name string) (Installable, bool) {
	for _, i := range installables() {
		if i.Name == name {
			return i, true
		}
	}
	return Installable{}, false
}

// programDir is the folder of the installation root dir that holds the
// server's program.
func (i Installable) programDir(dir string) string {
	if i.Tool == "npm" {
		return layoutDirs(dir)[1]
	}
	return layoutDirs(dir)[0]
}

// CommandLine is the command that installs the server into the
// installation root dir: `go install PACKAGE` (run with GOBIN set to
// dir/bin) or `npm install --prefix dir/npm PACKAGES`.
func (i Installable) CommandLine(dir string) []string {
	if i.Tool == "npm" {
		return append([]string{"npm", "install", "--prefix", filepath.Join(dir, "npm"), "--no-audit", "--no-fund"}, i.Packages...)
	}
	return append([]string{"go", "install"}, i.Packages...)
}

// InstallOptions say where [Install] installs and what it runs with.
type InstallOptions struct {
	// Dir is the installation root; "" means [InstallDir], where sessions
	// look for servers.
	Dir string
	// Env is the environment go and npm run with, and whose PATH they are
	// found on; nil means Tally's own.
	Env []string
	// Output receives what go or npm print; nil discards it.
	Output io.Writer
}

// Installed is what [Install] installed.
type Installed struct {
	// Name and Version are the server's.
	Name, Version string
	// Program is the server's program, now in place.
	Program string
}

// installMu keeps two installs of this process from sharing a folder.
var installMu sync.Mutex

// Install installs the server name of [Installables], at its pinned
// version, with go or npm: gopls by `go install` into Dir/bin, pyright
// and typescript-language-server by `npm install` into
// Dir/npm/node_modules. Sessions started afterwards find it there (see
// [SearchDirs]); a running session's servers find it at their next look.
// Its errors say what to do: install the missing tool, or what the
// failed command said.
func Install(ctx context.Context, name string, o InstallOptions) (Installed, error) {
	it, ok := LookupInstallable(name)
	if !ok {
		names := make([]string, 0, len(installables()))
		for _, i := range installables() {
			names = append(names, i.Name)
		}
		return Installed{}, fmt.Errorf("the language server %q is not one Tally installs; name one of %s, or install it yourself and set its command in the language-server file (%s)", name, strings.Join(names, ", "), FileName)
	}
	if it.Tool != "go" && it.Tool != "npm" || len(it.Packages) == 0 || it.Command == "" {
		return Installed{}, fmt.Errorf("the language server %q has no usable line in versions.txt; this build of Tally cannot install it", name)
	}
	dir := o.Dir
	if dir == "" {
		var err error
		if dir, err = InstallDir(); err != nil {
			return Installed{}, fmt.Errorf("the folder Tally installs language servers in is unknown (%w)", err)
		}
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	path := filepath.SplitList(envValue(env, "PATH"))
	args := it.CommandLine(dir)
	prog := findIn(args[0], path)
	if prog == "" {
		return Installed{}, missingTool(it)
	}
	if it.MinNode > 0 {
		if err := checkNode(ctx, it, path, env); err != nil {
			return Installed{}, err
		}
	}
	if err := os.MkdirAll(it.programDir(dir), 0o700); err != nil {
		return Installed{}, fmt.Errorf("the folder %s cannot be made (%w); check its permissions and try again", dir, err)
	}
	installMu.Lock()
	defer installMu.Unlock()
	cmd := exec.CommandContext(ctx, prog, args[1:]...)
	cmd.Dir = dir // not a module or package of the current folder
	cmd.Env = env
	if it.Tool == "go" {
		cmd.Env = setEnv(env, []string{"GOBIN=" + filepath.Join(dir, "bin")})
	}
	var tail lastLine
	out := io.Writer(&tail)
	if o.Output != nil {
		out = io.MultiWriter(o.Output, &tail)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	shown := strings.Join(args, " ")
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Installed{}, fmt.Errorf("installing %s was stopped before `%s` finished; run it again to install", name, shown)
		}
		said := err.Error()
		if l := tail.String(); l != "" {
			said += ": " + l
		}
		return Installed{}, fmt.Errorf("`%s` failed (%s); fix what it says (often the network or the %s version) and install again", shown, said, it.Tool)
	}
	program := findIn(it.Command, []string{it.programDir(dir)})
	if program == "" {
		return Installed{}, fmt.Errorf("`%s` finished but left no %s in %s; run it by hand to see why", shown, it.Command, it.programDir(dir))
	}
	return Installed{Name: name, Version: it.Version(), Program: program}, nil
}

// missingTool says that the tool installing it is not on PATH, and what
// to do.
func missingTool(it Installable) error {
	if it.Tool == "go" {
		return fmt.Errorf("installing %s %s needs Go, and go is not on PATH; install Go from https://go.dev/dl (or your distribution's golang package), put its bin folder on PATH and run `tally lsp install %s` again", it.Name, it.Version(), it.Name)
	}
	return fmt.Errorf("installing %s %s needs npm, and npm is not on PATH; install Node.js with npm from https://nodejs.org (or your distribution's nodejs and npm packages) and run `tally lsp install %s` again", it.Name, it.Version(), it.Name)
}

// checkNode checks that the node on path is new enough for it.
func checkNode(ctx context.Context, it Installable, path []string, env []string) error {
	again := fmt.Sprintf("install Node.js %d or newer from https://nodejs.org and run `tally lsp install %s` again", it.MinNode, it.Name)
	node := findIn("node", path)
	if node == "" {
		return fmt.Errorf("%s %s needs Node.js %d or newer, and node is not on PATH; %s", it.Name, it.Version(), it.MinNode, again)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--version")
	cmd.Env = env
	out, err := cmd.Output()
	v := strings.TrimSpace(string(out))
	major, convErr := strconv.Atoi(strings.SplitN(strings.TrimPrefix(v, "v"), ".", 2)[0])
	switch {
	case err != nil || convErr != nil:
		return fmt.Errorf("%s %s needs Node.js %d or newer, and %s --version did not say its version; %s", it.Name, it.Version(), it.MinNode, node, again)
	case major < it.MinNode:
		return fmt.Errorf("%s %s needs Node.js %d or newer, and node is %s; %s", it.Name, it.Version(), it.MinNode, v, again)
	}
	return nil
}

// lastLine keeps the last line of text written to it that is not blank.
type lastLine struct {
	mu   sync.Mutex
	line []byte
	part []byte
}

// Write implements io.Writer.
func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		if line := bytes.TrimSpace(l.part[:i]); len(line) > 0 {
			l.line = append(l.line[:0], line...)
		}
		l.part = l.part[i+1:]
	}
	if len(l.part) > 4096 { // a line without end: keep its start
		l.part = l.part[:4096]
	}
	return len(p), nil
}

// String returns the last line, clipped.
func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := l.line
	if t := bytes.TrimSpace(l.part); len(t) > 0 {
		line = t
	}
	s := strings.ToValidUTF8(string(line), "?")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
