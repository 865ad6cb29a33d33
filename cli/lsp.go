package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/text"
)

// lspUsage is the help of `tally lsp`.
const lspUsage = `usage:
  tally lsp status [--workspace DIR] [--json]       the language servers, started for the workspace's files, and their state
  tally lsp diagnostics FILE [--workspace DIR]      the file's diagnostics; exit status 1 when it has errors
  tally lsp install NAME...                         install gopls (with go), pyright or typescript-language-server
                                                    (with npm) at their pinned versions into Tally's folder of servers`

// lspSettle bounds the command line's wait for diagnostics: longer than
// a session's, since a one-shot command always starts its servers cold.
const lspSettle = 30 * time.Second

// cmdLSP runs `tally lsp SUBCOMMAND`.
func cmdLSP(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageNote(lspUsage, "tally lsp: say what to do")
	}
	sub, rest := args[0], args[1:]
	f, err := parseLSP(sub, rest)
	if err != nil {
		return err
	}
	switch sub {
	case "status":
		if len(f.args) != 0 {
			return usageNote(lspUsage, "tally lsp status takes no arguments")
		}
		return lspStatus(f, stdout)
	case "diagnostics":
		if len(f.args) != 1 {
			return usageNote(lspUsage, "tally lsp diagnostics needs one FILE")
		}
		return lspDiagnostics(f, stdout, stderr)
	case "install":
		if len(f.args) == 0 {
			return usageNote(lspUsage, "tally lsp install: name the server to install: %s", installableList())
		}
		return lspInstall(f.args, stdout, stderr)
	}
	return usageNote(lspUsage, "tally lsp: unknown subcommand %q", sub)
}

// usageNote is a usage error (exit status 2) saying format's sentence on
// one line and then usage as it is laid out, line by line: Main prints an
// error's own text on one line.
func usageNote(usage, format string, args ...any) error {
	return noted{usagef(format, args...), usage}
}

// lspFlags are the flags of the lsp subcommands.
type lspFlags struct {
	workspace string
	json      bool
	args      []string
}

func parseLSP(sub string, args []string) (*lspFlags, error) {
	f := &lspFlags{}
	fs := flag.NewFlagSet("lsp "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.workspace, "workspace", "", "")
	fs.BoolVar(&f.json, "json", false, "")
	var err error
	if f.args, err = parseAnywhere(fs, args); err != nil {
		return nil, usageNote(lspUsage, "tally lsp %s: %v", sub, err)
	}
	return f, nil
}

// lspManager acquires the manager of the workspace with the user's
// servers, each run in the sandbox where there is one (as the agent's
// commands are), logging under the user's cache folder. The caller calls
// the returned release, which also removes the temporary folder.
func (f *lspFlags) lspManager() (*lsp.Manager, func(), error) {
	ws := f.workspace
	if ws == "" {
		var err error
		if ws, err = os.Getwd(); err != nil {
			return nil, nil, fmt.Errorf("tally lsp: cannot read the current folder (%w); pass --workspace", err)
		}
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return nil, nil, fmt.Errorf("tally lsp: the workspace %q cannot be resolved (%w); pass an absolute --workspace", f.workspace, err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, nil, fmt.Errorf("tally lsp: the workspace %s is not a folder; pass an existing folder as --workspace", ws)
	}
	path, err := lsp.UserPath()
	if err != nil {
		return nil, nil, fmt.Errorf("tally lsp: %w", err)
	}
	servers, err := lsp.LoadConfig(path)
	if err != nil {
		return nil, nil, fmt.Errorf("tally lsp: %w", err)
	}
	tmp, err := os.MkdirTemp("", "tally-lsp-")
	if err != nil {
		return nil, nil, fmt.Errorf("tally lsp: a temporary folder cannot be made (%w); check the temporary folder's permissions", err)
	}
	env := &tool.Env{Workspace: ws, TempDir: tmp}
	logDir := ""
	if dir, err := os.UserCacheDir(); err == nil {
		logDir = filepath.Join(dir, "tally", "lsp")
	}
	m, release := lsp.Acquire(lsp.Options{
		Workspace: ws, Servers: servers, LogDir: logDir, Settle: lspSettle,
		Confine: func(c *exec.Cmd) (*exec.Cmd, error) {
			// gopls keeps its file cache apart from the build caches.
			c.Env = append(c.Env, "GOPLSCACHE="+filepath.Join(tmp, "gopls"))
			// The folder the program is installed in stays readable,
			// though it may be Tally's own (see lsp.InstallDir).
			return tool.ConfineProgram(env, c, lsp.InstallRoot(c.Path))
		},
	})
	return m, func() { release(); os.RemoveAll(tmp) }, nil
}

// lspStatus starts the servers the workspace's files need and prints
// every configured server with its state.
func lspStatus(f *lspFlags, stdout io.Writer) error {
	m, release, err := f.lspManager()
	if err != nil {
		return err
	}
	defer release()
	m.Start(context.Background())
	sts := m.Status()
	if f.json {
		enc := json.NewEncoder(stdout)
		for _, st := range sts {
			if err := enc.Encode(statusJSON(st)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, st := range sts {
		line := fmt.Sprintf("%-28s %-13s %s", st.Name, st.State, strings.Join(st.Languages, ", "))
		if st.State == lsp.StateStopped {
			st.Reason = "not started: the workspace has no files it handles"
		}
		if st.Reason != "" {
			line += " — " + st.Reason
		}
		if st.LogPath != "" && (st.State == lsp.StateRunning || st.State == lsp.StateFailed) {
			line += " (log: " + st.LogPath + ")"
		}
		fmt.Fprintln(stdout, safeText(line))
	}
	return nil
}

// statusJSON is one server of `tally lsp status --json`.
func statusJSON(st lsp.ServerStatus) map[string]any {
	return map[string]any{
		"name": st.Name, "state": st.State, "reason": st.Reason, "command": st.Command,
		"log": st.LogPath, "languages": st.Languages, "extensions": st.Extensions,
	}
}

// lspDiagnostics prints the diagnostics of one file; a file with errors
// fails the command.
func lspDiagnostics(f *lspFlags, stdout, stderr io.Writer) error {
	m, release, err := f.lspManager()
	if err != nil {
		return err
	}
	defer release()
	file := f.args[0]
	if !filepath.IsAbs(file) {
		// Relative to the current folder, or else to the workspace.
		inWorkspace := filepath.Join(m.Workspace(), file)
		if abs, err := filepath.Abs(file); err == nil && (exists(abs) || !exists(inWorkspace)) {
			file = abs
		} else {
			file = inWorkspace
		}
	}
	if !exists(file) {
		return fmt.Errorf("tally lsp diagnostics: the file %s does not exist; give an existing file", f.args[0])
	}
	set, rep := m.Diagnostics(context.Background(), file)
	fmt.Fprint(stdout, safeText(lsp.Render(set, 0)))
	for _, note := range rep.Notes {
		fmt.Fprintln(stderr, safeText("note: "+note))
	}
	if len(rep.Servers) == 0 && len(rep.Notes) == 0 {
		fmt.Fprintln(stderr, safeText("note: no language server is configured for "+filepath.Base(file)))
	}
	if n := len(set.Errors()); n > 0 {
		return errors.New(text.Plural(n, "error") + " in " + filepath.Base(file))
	}
	return nil
}

// installableList names the servers `tally lsp install` installs, each
// with its version and its tool: "gopls v0.23.0 (with go), …".
func installableList() string {
	var names []string
	for _, i := range lsp.Installables() {
		names = append(names, i.Name+" "+i.Version()+" (with "+i.Tool+")")
	}
	return strings.Join(names, ", ")
}

// lspInstall installs each named server into Tally's folder of servers,
// showing what go or npm print on stderr and each installed program on
// stdout.
func lspInstall(names []string, stdout, stderr io.Writer) error {
	dir, err := lsp.InstallDir()
	if err != nil {
		return fmt.Errorf("tally lsp install: %w", err)
	}
	for _, name := range names {
		it, ok := lsp.LookupInstallable(name)
		if !ok {
			return usageNote(lspUsage, "tally lsp install: %q is not a server Tally installs; name one of %s", name, installableList())
		}
		fmt.Fprintf(stderr, "Installing %s %s into %s: %s\n", name, it.Version(), safeText(dir), safeText(strings.Join(it.CommandLine(dir), " ")))
		got, err := lsp.Install(context.Background(), name, lsp.InstallOptions{Dir: dir, Output: stderr})
		if err != nil {
			return fmt.Errorf("tally lsp install: %w", err)
		}
		fmt.Fprintf(stdout, "installed %s %s: %s\n", got.Name, got.Version, safeText(got.Program))
	}
	return nil
}

// exists reports whether a file or folder is at p.
func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
