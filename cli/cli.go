// Package cli implements Tally's headless command line: run, sessions,
// inspect and export, sharing one set of flags. Main returns the process
// exit status, one of the Exit constants: 0 on success, 1 when a turn or
// command failed, 2 on bad usage, and for `tally run` 3 to 5 (a denied
// approval, the step limit, an answer not valid against --json-schema).
// Errors are printed to stderr as one sentence; the API key never is.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/tally-dev/tally/engine/cmdrule"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
)

// Usage is the command summary printed for `tally help` and bad usage.
const Usage = `Tally — a context-engineered coding agent for OpenAI-compatible models.

Usage:
  tally                                 open the desktop app
  tally run [flags] "PROMPT"            run one user turn headless
  tally sessions [--json]               list sessions, one a line starting with its ID
  tally search QUERY [--json] [--reindex]  the messages of every session with all the words, one hit a line
  tally inspect SESSION                 the next request as the model would see it
  tally inspect --ledger SESSION        per-request tokens, cache hits and cost
  tally preview SESSION                 compaction dry run: each layer, pins, cache cost
  tally compact SESSION                 apply compaction now (may ask the model for a summary)
  tally archive SESSION [CYCLE]         list archived cycles, or print one
  tally purge SESSION [--yes]           let the model propose what to remove; apply with --yes
  tally export SESSION [--format F]     the whole history as JSON lines, or md / html to share
  tally changes SESSION [--turn N]      diffs of every file the session changed (since turn N)
  tally rewind SESSION --to N [--files-only|--chat-only] [--force] [--yes]
                                        go back to the start of turn N: dry run unless --yes
  tally fork SESSION [--at N] [--worktree] [--title T]
                                        a new session whose history is SESSION's up to the end of turn N (default: the
                                        last), cache-warm; --worktree: in a worktree of its own with the files of turn N
  tally mcp list [--probe]              MCP servers (yours and the workspace's), with --probe their tools
  tally mcp add NAME -- COMMAND ARGS    add a stdio MCP server (or NAME --url URL for HTTP); remove|enable|disable NAME
  tally mcp trust [--workspace DIR]     run the servers of the workspace's .tally/mcp.json (never without this)
  tally mcp login NAME | logout NAME    sign in to a remote MCP server that asks for OAuth, or forget the sign-in
  tally mcp call NAME TOOL [JSON]       call one tool of a server outside a session, to try it
  tally lsp status [--workspace DIR]    language servers for the workspace's files and their state
  tally lsp diagnostics FILE            a file's diagnostics from its language server (exit 1 on errors)
  tally lsp install NAME                install gopls, pyright or typescript-language-server (pinned versions) for Tally
  tally skills [list|trust|untrust]     Agent Skills (SKILL.md) of you and the workspace
  tally worktree diff|merge|remove SESSION  the git worktree of a session run with --worktree
  tally profile [list|add|remove|default|role|fallback]  endpoint profiles (DeepSeek, a local llama.cpp…), a cheaper model
                                        per role, and the fallback chain with what a switch costs
  tally hooks [list|trust|untrust]      command hooks of you and the workspace (its .tally/hooks.json only once trusted)
  tally memory [list|propose SESSION|accept ID|edit ID TEXT [--kind KIND]|reject ID]
                                        memory entries the model proposes over a session, kept only once you accept them
  tally acp [flags]                     serve the Agent Client Protocol on stdin/stdout for an editor (Zed, JetBrains, Neovim)
  tally help                            this text

Flags (of tally run; each other command takes the ones that apply to it):
  --data DIR             data directory (env TALLY_DATA; default ~/.local/share/tally)
  --base-url URL         OpenAI-compatible endpoint (env OPENAI_BASE_URL)
  --model NAME           model name (env TALLY_MODEL)
  --profile NAME         the endpoint profile to use (see tally profile; main: the main connection);
                         a stored session keeps its own unless this is given
  --context-window N     override the model's context window in tokens
  --fallback PROFILE     tally run: when the endpoint fails for good, go on with this profile (main: the main
                         connection; repeatable, up to 3, in order; none: no fallback); default: tally profile fallback
  --effort LEVEL         tally run: how much the model thinks: off, low, medium, high, max or default, from this
                         turn on (stored with the session); ROLE=LEVEL for subagents, summaries or briefs (repeatable)
  --session ID           continue this session, or start one under this ID
  --workspace DIR        folder the agent works in (default: current folder)
  --worktree             tally run: start the session in a git worktree of its own (branch tally/<session>)
  --add-dir DIR          tally run: a further folder the agent may read and change by absolute path (repeatable);
                         given, they replace a stored session's; not given, it keeps its own
  --yes                  approve every tool call that would ask (the mode still refuses what it refuses),
                         and accept the defaults of the forms MCP servers ask for
  --network on|off       tally run: switch the session's Network for its commands and web_fetch (stored
                         with the session; default: as the session has it, off for a new one)
  --mode MODE            permission mode: read-only, ask (default), auto-edit or full-auto (sandbox needed)
  --allow-command PATTERN  for this run, commands matching PATTERN run without asking, e.g. 'go test ./...'
                         or 'npm run lint *' (repeatable; plain words only, a last * allows any further words)
  --deny-command PATTERN   for this run, refuse without asking any command one of whose parts matches,
                         e.g. 'rm *' (repeatable; in every mode, and it beats --allow-command)
  --image FILE           tally run: attach a PNG, JPEG, GIF or WebP image (up to 5 MB) to the prompt (repeatable)
  --vision               the model accepts images, whatever Settings and Tally's model table say
  --fetch-local          tally run: web_fetch may open loopback and link-local pages (Settings' Local pages), this run only
  --propose-memory       tally run: when the turn ends, the model proposes memory entries to review (see tally memory)
  --json                 print events as JSON lines on stdout (tally run: versioned, see docs/cli.md)
  --json-schema FILE     tally run: the final answer must be JSON valid against this JSON Schema (exit 5 if not)
  --max-steps N          model requests allowed per turn (default 50)
  --status-mode MODE     where the status block goes: tail, append or on-change (default: the provider's, see Settings);
                         off sends none
  --no-checklist         tally run: leave the checklist's tools out (with --status-mode off, to measure what both are worth)
  --warm-up              on a new session, pre-warm the provider's prefix cache first
  --compaction MODE      at the threshold: auto (default), ask (headless: skip) or off
  --cycle-at FRACTION    start a new cycle at this share of the window (default 0.75; 0 = never)
  --keep-under N         keep the context under N tokens (64K, 128000…), auto (default: the level
                         that costs least at the model's prices) or window (the window's own threshold)
The API key is read from OPENAI_API_KEY or DEEPSEEK_API_KEY, or from Settings in the app.
`

// noted is an error with a note Main prints on the line after it, about
// what the command did after the failure.
type noted struct {
	error
	note string
}

func (n noted) Unwrap() error { return n.error }

// usageError marks errors that should exit with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// options are the parsed shared flags.
type options struct {
	data, baseURL, model, session, workspace string
	profile                                  string // --profile NAME
	statusMode, compaction, mode, keepUnder  string
	cycleAt                                  float64
	cycleAtSet                               bool
	contextWindow, maxSteps                  int
	yes, json, ledger, warmUp, worktree      bool
	noChecklist                              bool     // tally run --no-checklist
	allowCommands, denyCommands              []string // --allow-command, --deny-command
	addDirs                                  []string // tally run --add-dir DIR, absolute; nil: none given
	images                                   []string // tally run --image FILE
	vision                                   bool     // tally run --vision
	fetchLocal                               bool     // tally run --fetch-local
	jsonSchema                               string   // tally run --json-schema FILE
	network                                  string   // tally run --network on|off; "" keeps the session's
	fallback                                 []string // tally run --fallback PROFILE; nil: the saved chain
	proposeMemory                            bool     // tally run --propose-memory
	efforts                                  []effortFlag
	args                                     []string
	// served is the app's workbench and the client's folder and
	// environment when the app runs this command for the command line
	// (see ServeReads), nil otherwise.
	served *served
}

func parse(name string, args []string, stderr io.Writer) (*options, error) {
	o := &options{served: servedBy(stderr)}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.data, "data", "", "")
	fs.StringVar(&o.baseURL, "base-url", "", "")
	fs.StringVar(&o.model, "model", "", "")
	fs.StringVar(&o.profile, "profile", "", "")
	fs.StringVar(&o.session, "session", "", "")
	fs.StringVar(&o.workspace, "workspace", "", "")
	fs.BoolVar(&o.worktree, "worktree", false, "")
	fs.IntVar(&o.contextWindow, "context-window", 0, "")
	fs.StringVar(&o.statusMode, "status-mode", "", "")
	fs.StringVar(&o.compaction, "compaction", "", "")
	fs.StringVar(&o.mode, "mode", "", "")
	fs.StringVar(&o.keepUnder, "keep-under", "", "")
	fs.Func("cycle-at", "", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			return fmt.Errorf("--cycle-at must be a fraction between 0 and 1, not %q", v)
		}
		o.cycleAt, o.cycleAtSet = f, true
		return nil
	})
	fs.IntVar(&o.maxSteps, "max-steps", 0, "")
	fs.BoolVar(&o.yes, "yes", false, "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.BoolVar(&o.ledger, "ledger", false, "")
	fs.BoolVar(&o.warmUp, "warm-up", false, "")
	fs.BoolVar(&o.noChecklist, "no-checklist", false, "")
	fs.Func("allow-command", "", func(v string) error { o.allowCommands = append(o.allowCommands, v); return nil })
	fs.Func("deny-command", "", func(v string) error { o.denyCommands = append(o.denyCommands, v); return nil })
	fs.Func("add-dir", "", func(v string) error {
		abs, err := filepath.Abs(v)
		o.addDirs = append(o.addDirs, abs)
		return err
	})
	fs.Func("image", "", func(v string) error { o.images = append(o.images, v); return nil })
	fs.Func("fallback", "", func(v string) error {
		if o.fallback == nil {
			o.fallback = []string{}
		}
		if v != "none" {
			o.fallback = append(o.fallback, v)
		}
		return nil
	})
	fs.Func("effort", "", func(v string) error {
		e, err := parseEffortFlag(v)
		o.efforts = append(o.efforts, e)
		return err
	})
	fs.BoolVar(&o.vision, "vision", false, "")
	fs.BoolVar(&o.fetchLocal, "fetch-local", false, "")
	fs.BoolVar(&o.proposeMemory, "propose-memory", false, "")
	fs.StringVar(&o.jsonSchema, "json-schema", "", "")
	fs.Func("network", "", func(v string) error {
		switch v {
		case "on", "off":
			o.network = v
			return nil
		}
		return fmt.Errorf("--network must be on or off, not %q", v)
	})
	var err error
	if o.args, err = parseAnywhere(fs, args); err != nil {
		return nil, usagef("tally %s: %v; run `tally help` for the flags", name, err)
	}
	switch o.statusMode {
	case "", "tail", "append", "on-change", "off":
	default:
		return nil, usagef("tally %s: --status-mode must be tail, append, on-change or off, not %q", name, o.statusMode)
	}
	if _, err := rewrite.ParseMode(o.compaction); err != nil {
		return nil, usagef("tally %s: --compaction must be auto, ask or off, not %q", name, o.compaction)
	}
	if _, err := workbench.ParseKeepUnder(o.keepUnder); err != nil {
		return nil, usagef("tally %s: --keep-under: %v", name, err)
	}
	if _, err := tool.ParseMode(o.mode); err != nil {
		return nil, usagef("tally %s: --mode: %v", name, err)
	}
	for _, p := range o.allowCommands {
		if _, err := cmdrule.Parse(cmdrule.Allow, p); err != nil {
			return nil, usagef("tally %s: --allow-command: %v", name, err)
		}
	}
	for _, p := range o.denyCommands {
		if _, err := cmdrule.Parse(cmdrule.Deny, p); err != nil {
			return nil, usagef("tally %s: --deny-command: %v", name, err)
		}
	}
	if o.contextWindow < 0 || o.maxSteps < 0 {
		return nil, usagef("tally %s: --context-window and --max-steps must be positive", name)
	}
	return o, nil
}

// open opens the data directory of --data (or the default one) through
// the workbench; settingsErr is what was wrong with the saved settings,
// for the commands that depend on them. The caller closes the workbench.
//
// While the desktop app is open it holds the store's lock; open then
// fails at once with an error matching workbench.ErrLocked, so Main hands
// the command to the app (see heldByApp) without waiting out the lock's
// timeout. A lock held by anything else, such as another command about
// to finish, is waited for as before.
func (o *options) open() (w *workbench.Workbench, settingsErr, err error) {
	if o.served != nil {
		return o.served.borrow(commandHolder), nil, nil // run inside the app, on its open store
	}
	w, settingsErr, err = workbench.TryOpen(o.data, os.Getenv)
	if errors.Is(err, workbench.ErrLocked) && !appServes(o.data) {
		return waitOpen(o.data, os.Getenv)
	}
	return w, settingsErr, err
}

// waitOpen opens the store, waiting for its lock; a variable so tests
// can tell whether a command waited.
var waitOpen = workbench.Open

// sessionOptions maps the shared flags to the workbench's session options
// for session id ("" for a new one).
func (o *options) sessionOptions(id string) workbench.SessionOptions {
	so := workbench.SessionOptions{
		ID:          id,
		Flags:       workbench.Flags{BaseURL: o.baseURL, Model: o.model, ContextWindow: o.contextWindow},
		Compaction:  o.compaction,
		KeepUnder:   o.keepUnder,
		Mode:        tool.Mode(o.mode),
		MaxSteps:    o.maxSteps,
		StatusMode:  status.Placement(o.statusMode),
		NoChecklist: o.noChecklist,
		Profile:     o.profile,
		Fallback:    o.fallback,
	}
	// The run's own command rules; the workspace's stored ones apply too.
	so.AllowCommands, so.DenyCommands = o.allowCommands, o.denyCommands
	so.Roots = o.addDirs
	so.Vision = o.vision
	so.PrepareSnapshots = true // the turn's first command finds the workspace listed
	if o.cycleAtSet {
		at := o.cycleAt
		so.CycleAt = &at
	}
	return so
}

// Main runs the command line with args (without the program name).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, Usage)
		return ExitUsage
	}
	var err error
	switch args[0] {
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, Usage)
		return ExitOK
	case "run":
		mcpRunNote(args[1:], stderr)
		err = cmdRun(args[1:], stdin, stdout, stderr)
	case "mcp":
		err = cmdMCP(args[1:], stdin, stdout, stderr)
	case "acp":
		if code, ok := relayACP(args, stdin, stdout, stderr); ok {
			return code
		}
		err = cmdACP(args[1:], stdin, stdout, stderr)
	case "lsp":
		err = cmdLSP(args[1:], stdout, stderr)
	case "skills":
		err = cmdSkills(args[1:], stdout, stderr)
	case "worktree":
		err = cmdWorktree(args[1:], stdout, stderr)
	case "profile", "profiles":
		err = cmdProfile(args[1:], stdin, stdout, stderr)
	case "hooks":
		err = cmdHooks(args[1:], stdout, stderr)
	case "memory":
		err = cmdMemory(args[1:], stdout, stderr)
	case "sessions":
		err = cmdSessions(args[1:], stdout, stderr)
	case "inspect":
		err = cmdInspect(args[1:], stdout, stderr)
	case "export":
		err = cmdExport(args[1:], stdout, stderr)
	case "preview":
		err = cmdPreview(args[1:], stdout, stderr)
	case "compact":
		err = cmdCompact(args[1:], stdout, stderr)
	case "archive":
		err = cmdArchive(args[1:], stdout, stderr)
	case "purge":
		err = cmdPurge(args[1:], stdin, stdout, stderr)
	case "changes":
		err = cmdChanges(args[1:], stdout, stderr)
	case "rewind":
		err = cmdRewind(args[1:], stdout, stderr)
	case "fork":
		err = cmdFork(args[1:], stdout, stderr)
	case "search":
		err = cmdSearch(args[1:], stdout, stderr)
	default:
		err = usagef("tally: unknown command %q; run `tally help` to see the commands", args[0])
	}
	if err == nil {
		return ExitOK
	}
	if code, ok := heldByApp(args, err, stdout, stderr); ok {
		return code
	}
	fmt.Fprintln(stderr, safeText(message(err)))
	var n noted
	if errors.As(err, &n) {
		fmt.Fprintln(stderr, safeText(n.note))
	}
	return exitCode(err)
}

// enginePrefix matches the package names an engine error may still open
// with ("transcript: "), alone or after the command's own "tally X: ".
var enginePrefix = regexp.MustCompile(`^((?:tally [a-z-]+: )?)(?:(?:agent|workbench|storage|llm|checkpoint|config|compact|mcp|cycle|transcript|diff|purge|status|remote|tool): )+`)

// message is err as the command line shows it: one line, a sentence
// without the engine's package prefixes.
func message(err error) string {
	return enginePrefix.ReplaceAllString(text.OneLine(err.Error(), 0), "$1")
}

// openSessionStore parses the flags of a command about one stored session
// (its ID as the only argument, or --session), opens the data directory
// and checks the session exists. withSettings says whether the command
// depends on the saved settings: then unreadable ones are an error. The
// caller closes the workbench.
func openSessionStore(name string, args []string, stderr io.Writer, withSettings bool) (*options, string, *workbench.Workbench, error) {
	o, err := parse(name, args, stderr)
	if err != nil {
		return nil, "", nil, err
	}
	id, err := needSession(name, o)
	if err != nil {
		return nil, "", nil, err
	}
	w, settingsErr, err := o.open()
	if err != nil {
		return nil, "", nil, err
	}
	if err := checkSession(w, name, id); err != nil {
		w.Close()
		return nil, "", nil, err
	}
	if withSettings && settingsErr != nil {
		w.Close()
		return nil, "", nil, settingsErr
	}
	return o, id, w, nil
}

// checkSession reports a session that is not in the store in one sentence.
func checkSession(w *workbench.Workbench, name, id string) error {
	_, err := w.Session(id)
	if errors.Is(err, workbench.ErrNotFound) {
		return fmt.Errorf("tally %s: no session with ID %q; run `tally sessions` to list them", name, id)
	}
	return err
}

func needSession(name string, o *options) (string, error) {
	switch {
	case len(o.args) == 1:
		return o.args[0], nil
	case len(o.args) == 0 && o.session != "":
		return o.session, nil
	}
	return "", usagef("tally %s: give exactly one session ID (see `tally sessions`)", name)
}

// parseAnywhere parses args with fs, flags before or after the positional
// arguments, which it returns in order; everything after "--" is
// positional.
func parseAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}
