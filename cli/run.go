package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/step"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/engine/worktree"
	"github.com/tally-dev/tally/internal/text"
)

func cmdRun(args []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	o, err := parse("run", args, stderr)
	if err != nil {
		return err
	}
	var schema *answerSchema
	if o.jsonSchema != "" {
		if schema, err = loadSchema(o.jsonSchema); err != nil {
			return err
		}
	}
	text := strings.Join(o.args, " ")
	if text == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("tally run: cannot read the prompt from standard input: %w", err)
		}
		text = string(b)
	}
	if strings.TrimSpace(text) == "" && len(o.images) == 0 {
		return usagef(`tally run: give the prompt as an argument, e.g. tally run "fix the failing test", or "-" to read it from standard input`)
	}
	imgs, err := readImages(o.images, stderr) // before anything is opened: a bad file changes nothing
	if err != nil {
		return err
	}
	if inv, ok, err := command.ParseAction(text); ok && len(imgs) == 0 {
		if err != nil {
			return usagef("tally run: %s", err.Error())
		}
		return runBuiltin(o, inv, stdout, stderr) // /compact, /help …: an action, not a message
	}
	w, settingsErr, err := o.open()
	if err != nil {
		return err
	}
	defer w.Close()
	if settingsErr != nil {
		return settingsErr
	}
	if o.worktree && o.session != "" {
		return usagef("tally run: --worktree starts a new session in a worktree of its own; leave out --session, or drop --worktree to continue that session where it works")
	}
	out := &printer{stdout: stdout, stderr: stderr, json: o.json, answer: stdout}
	if schema != nil {
		out.answer = stderr // stdout gets the validated JSON alone
	}
	denied := &denials{}
	so := o.sessionOptions(o.session)
	so.Approver = approver(o.yes, stdin, stderr, denied)
	term, _ := so.Approver.(*terminalApprover)
	out.forms = newSessionForms(newFormAnswerer("tally run", o.yes, stdin, stderr, term))
	so.Forms = true
	so.OnEvent = out.event
	cfg, err := w.Config(so)
	if err != nil {
		return err
	}
	if o.fetchLocal {
		cfg.Shell.FetchLocal = true // this run only, as Settings' "Local pages" does for every session
	}
	if len(imgs) > 0 && !cfg.Vision {
		return fmt.Errorf("tally run: %w (or pass --vision)", images.NoVision(cfg.ModelName))
	}
	ws := o.workspace
	if ws == "" {
		if ws, err = os.Getwd(); err != nil {
			return fmt.Errorf("tally run: cannot read the current folder (%w); pass --workspace", err)
		}
	}
	// created: this run made the session, so a session that never got
	// an answer is this run's to remove again.
	var sess *agent.Session
	created := o.session == ""
	if o.session != "" {
		if err := agent.ValidID(o.session); err != nil {
			return usageError{err.Error()}
		}
		_, lookErr := w.Session(o.session)
		created = errors.Is(lookErr, workbench.ErrNotFound)
		sess, err = w.OpenOrCreateSession(cfg, o.session, ws)
	} else if o.worktree {
		var t worktree.Tree
		sess, t, err = w.CreateSessionInWorktree(context.Background(), cfg, ws, "")
		if err == nil {
			fmt.Fprintf(stderr, "worktree %s on branch %s\n", t.Path, t.Branch)
		}
	} else {
		sess, err = w.CreateSession(cfg, ws, "")
	}
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(stderr, "session %s\n", sess.Snapshot().Meta.ID)
	}
	if err := applyEfforts(w, sess.Snapshot().Meta.ID, o.efforts, stderr); err != nil {
		sess.Close()
		return err
	}
	var rs result // the --json stream's last line
	if o.json {
		rs.Session = sess.Snapshot().Meta.ID
		defer func() {
			rs.Exit, rs.Denied = exitCode(err), denied.count()
			if err != nil {
				rs.Error = message(err)
			}
			out.result(rs)
		}()
	}
	if term != nil {
		term.allowCommand = sess.Permissions().AllowCommand
	}
	if o.network != "" {
		if err := sess.Permissions().SetAllowNetwork(o.network == "on"); err != nil {
			return fmt.Errorf("tally run: the Network switch could not be stored (%w); try again", err)
		}
		fmt.Fprintf(stderr, "network %s: %s\n", o.network, sess.Permissions().SandboxNote())
	}
	out.forms.open(sess)
	closed := false
	defer func() {
		if !closed {
			sess.Close() // stops the session's MCP servers, closes its checkpoints
		}
	}()
	// failed is err after a failed request: a session this run created
	// that never got an answer is removed, and the error says so.
	failed := func(err error) error {
		if !created || answered(w, sess) {
			return err
		}
		closed = true
		sess.Close()
		if derr := w.Delete(sess.Snapshot().Meta.ID); derr != nil {
			return noted{err, fmt.Sprintf("The new session %s got no answer and could not be removed (%s); delete it in the app.", sess.Snapshot().Meta.ID, message(derr))}
		}
		return noted{err, fmt.Sprintf("The new session %s got no answer, so it was removed again.", sess.Snapshot().Meta.ID)}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if o.warmUp && len(sess.Snapshot().Messages()) == 0 {
		row, err := sess.WarmUp(ctx)
		if err != nil {
			return failed(err)
		}
		fmt.Fprintf(stderr, "cache warm-up: %d prompt tokens\n", row.PromptTokens)
	}
	if schema != nil {
		text = schema.prompt(text)
	}
	res, err := sess.RunWithImages(ctx, text, imgs)
	out.finish()
	rs.Reason, rs.Answer = res.Reason, res.Answer
	if err != nil {
		if res.Reason == step.ReasonStepLimit {
			return withExit(failed(err), ExitBudget)
		}
		return failed(err)
	}
	if res.Reason == step.ReasonCancelled {
		return fmt.Errorf("tally run: the turn was interrupted; the conversation is saved and can be continued with --session %s", sess.Snapshot().Meta.ID)
	}
	if schema != nil {
		valid, err := checkAnswer(ctx, sess, schema, res.Answer, out)
		if err != nil {
			return err
		}
		rs.JSON = valid
		if !o.json {
			fmt.Fprintf(stdout, "%s\n", valid)
		}
	}
	if o.proposeMemory {
		proposeAtEnd(ctx, w, sess, stderr)
	}
	if n := denied.count(); n > 0 {
		return exitError{fmt.Errorf("tally run: the turn ended, but %d tool call(s) needing approval were denied; allow them with --yes or a permission mode such as --mode auto-edit", n), ExitDenied}
	}
	return nil
}

// checkAnswer validates the turn's answer against schema; when it fails,
// the model is told why and asked once more. It returns the valid JSON.
func checkAnswer(ctx context.Context, sess *agent.Session, schema *answerSchema, answer string, out *printer) (json.RawMessage, error) {
	valid, problem := schema.check(answer)
	if problem == nil {
		return valid, nil
	}
	fmt.Fprintf(out.stderr, "tally run: the answer does not validate against %s (%s); asking the model once more\n", schema.path, safeText(text.OneLine(problem.Error(), 300)))
	res, err := sess.Run(ctx, schema.retryPrompt(problem))
	out.finish()
	if err != nil {
		if res.Reason == step.ReasonStepLimit {
			return nil, withExit(err, ExitBudget)
		}
		return nil, err
	}
	if valid, problem = schema.check(res.Answer); problem != nil {
		return nil, exitError{fmt.Errorf("tally run: the final answer does not validate against the JSON Schema %s, even after one retry (%s); read the answer with tally export --session %s, or relax the schema", schema.path, text.OneLine(problem.Error(), 300), sess.Snapshot().Meta.ID), ExitSchema}
	}
	return valid, nil
}

// answered reports whether the model answered any request of sess: the
// ledger has a row, or the conversation an assistant message.
func answered(w *workbench.Workbench, sess *agent.Session) bool {
	if rows, err := w.Ledger(sess.Snapshot().Meta.ID); err != nil || len(rows) > 0 {
		return true // unknown counts as answered: never remove on a guess
	}
	for _, m := range sess.Snapshot().Messages() {
		if m.Role == transcript.Assistant {
			return true
		}
	}
	return false
}

// printer writes events for a person (text on stdout, progress on stderr)
// or as JSON lines on stdout.
type printer struct {
	mu      sync.Mutex
	stdout  io.Writer
	stderr  io.Writer
	json    bool
	answer  io.Writer // where the model's streamed text goes (stdout, or stderr under --json-schema)
	midLine bool
	forms   *sessionForms // answers the session's forms; nil answers none
}

func (p *printer) event(e agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.forms != nil {
		p.forms.event(e, p.stderr)
	}
	if p.json {
		b, err := json.Marshal(e)
		if err == nil {
			p.stdout.Write(append(safeJSON(versioned(b)), '\n'))
		}
		return
	}
	// Everything printed from an event — the model's streamed text above
	// all — goes through safeText, the one rule for text from outside on a
	// terminal: a reply carrying ESC[8m (conceal), an OSC 52 clipboard
	// write or a carriage return over a fake approval card shows as
	// visible escapes, never as terminal commands.
	switch e.Kind {
	case agent.EventDelta:
		if e.Delta.Content != "" {
			io.WriteString(p.answerTo(), safeText(e.Delta.Content))
			p.midLine = !strings.HasSuffix(e.Delta.Content, "\n")
		}
	case agent.EventToolStart:
		p.newline()
		fmt.Fprintf(p.stderr, "→ %s\n", safeText(tool.Summarize(e.Call.Name, json.RawMessage(e.Call.Arguments))))
	case agent.EventRetry:
		if e.Retry.Fallback != "" {
			p.newline()
			fmt.Fprintf(p.stderr, "falling back: %s (%s)\n", safeText(e.Retry.Fallback), safeText(e.Retry.Reason))
			break
		}
		fmt.Fprintf(p.stderr, "retrying in %s (attempt %d of %d): %s\n", e.Retry.Wait.Round(time.Millisecond), e.Retry.Attempt, e.Retry.MaxAttempts, safeText(e.Retry.Reason))
	case agent.EventMessage:
		if e.Message != nil && e.Message.Role == "tool" && e.Message.IsError {
			fmt.Fprintf(p.stderr, "  %s\n", safeText(text.FirstLine(e.Message.Text(), quoteRunes)))
		}
	case agent.EventError:
		p.newline()
	case agent.EventMCP:
		if e.Err != "" {
			p.newline()
			fmt.Fprintf(p.stderr, "MCP: %s\n", safeText(text.FirstLine(e.Err, quoteRunes)))
		}
	case agent.EventHook:
		p.newline()
		fmt.Fprintf(p.stderr, "hook: %s\n", safeText(text.OneLine(e.Reason, 600)))
	case agent.EventTurnEnd:
		p.newline()
	}
}

func (p *printer) newline() {
	if p.midLine {
		io.WriteString(p.answerTo(), "\n")
		p.midLine = false
	}
}

// answerTo is where the model's text goes.
func (p *printer) answerTo() io.Writer {
	if p.answer == nil {
		return p.stdout
	}
	return p.answer
}

// result writes the --json stream's last line.
func (p *printer) result(r result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	writeResult(p.stdout, r)
}

// quoteRunes bounds the line of a message, brief or description that the
// commands quote in their output.
const quoteRunes = 160

func (p *printer) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.newline()
}

// approver returns the CLI's approval gate: --yes approves everything; on a
// terminal the user is asked; otherwise calls needing approval are denied.
// Each denial is counted in denied.
func approver(yes bool, stdin io.Reader, stderr io.Writer, denied *denials) tool.Approver {
	if yes {
		return tool.ApproveAll{}
	}
	if f, ok := terminalIn(stdin); ok {
		return &terminalApprover{in: bufio.NewReader(f), out: stderr, denied: denied}
	}
	return &noticeDeny{out: stderr, denied: denied}
}

// noticeDeny denies every call that needs approval when there is no
// terminal to ask on. It says so once, at the first such call; each
// denied call still shows as a refused result.
type noticeDeny struct {
	out    io.Writer
	once   sync.Once
	denied *denials // counts the denials; nil counts none
}

// Approve implements tool.Approver: it denies req.
func (n *noticeDeny) Approve(_ context.Context, req tool.ApprovalRequest) (tool.Decision, error) {
	n.once.Do(func() {
		fmt.Fprintf(n.out, "tally run: %s%s needs approval, but standard input is not a terminal to ask on, so it and every later call that needs approval are denied; run on a terminal, or allow them with --yes or a permission mode such as --mode auto-edit\n", safeText(req.Summary), askedBy(req))
	})
	n.denied.add()
	return tool.Deny, nil
}

// askedBy is " (asked by sub-agent …)" for a sub-agent's request, "" for
// the session's own agent.
func askedBy(req tool.ApprovalRequest) string {
	if req.Asker == "" {
		return ""
	}
	return " (asked by sub-agent " + safeText(req.Asker) + ")"
}

// terminalApprover asks on the terminal. Sub-agents of one batch ask at
// the same time; turn lets one request at a time show its card and read
// its answer, so every card is whole and the answer typed under it is
// that card's.
type terminalApprover struct {
	in   *bufio.Reader
	out  io.Writer
	turn sync.Mutex // held while a card is on screen and its answer read
	// allowCommand stores a command rule for the workspace ([c]); nil
	// offers none. It is set before the turn starts.
	allowCommand func(pattern string) error
	denied       *denials // counts the denials; nil counts none
}

// Approve implements tool.Approver through ApproveHunks.
func (t *terminalApprover) Approve(ctx context.Context, req tool.ApprovalRequest) (tool.Decision, error) {
	d, _, err := t.ApproveHunks(ctx, req)
	return d, err
}

// ApproveHunks shows the whole call (see tool.Display: wrapped, control
// characters and long runs of spaces made visible, never cut) and reads
// the answer; for an edit of several changes, [p]ick asks about each one,
// and only the accepted changes are written.
func (t *terminalApprover) ApproveHunks(ctx context.Context, req tool.ApprovalRequest) (tool.Decision, []bool, error) {
	t.turn.Lock()
	defer t.turn.Unlock()
	d, accepted, err := t.ask(req)
	if d == tool.Deny {
		t.denied.add()
	}
	return d, accepted, err
}

// ask shows the call and reads the answer; the caller holds turn.
func (t *terminalApprover) ask(req tool.ApprovalRequest) (tool.Decision, []bool, error) {
	shown := req.Display
	if shown == "" {
		var ok bool
		if shown, ok = tool.Display(req.Tool, json.RawMessage(req.Arguments)); !ok {
			fmt.Fprintf(t.out, "denied %s%s: too long to show for review\n", safeText(req.Summary), askedBy(req))
			return tool.Deny, nil, nil
		}
	}
	fmt.Fprintf(t.out, "\nApprove this call%s?\n%s\n", askedBy(req), shown)
	if req.Diff != nil && req.Diff.Changed() {
		// The change as it would land: the file on disk now against the
		// proposed content.
		io.WriteString(t.out, safeText(req.Diff.Unified()))
	}
	if req.Note != "" {
		fmt.Fprintf(t.out, "  (%s)\n", req.Note)
	}
	if req.Sandbox != "" {
		fmt.Fprintf(t.out, "  [%s]\n", req.Sandbox)
	}
	pick := req.Diff != nil && len(req.Diff.Hunks) > 1
	rules := len(req.CommandRules) > 0 && t.allowCommand != nil
	choices := "[y]es / [n]o / [a]lways for this tool"
	if req.NoAlways {
		choices = "[y]es / [n]o"
	}
	if pick {
		choices += " / [p]ick changes"
	}
	if rules {
		fmt.Fprintf(t.out, "  [c] always allows, in this workspace: %s\n", safeText(strings.Join(req.CommandRules, " · ")))
		choices += " / [c]ommand rule"
	}
	fmt.Fprint(t.out, choices+": ")
	switch t.answer() {
	case "y", "yes":
		return tool.Approve, nil, nil
	case "a", "always":
		if req.NoAlways {
			return tool.Approve, nil, nil
		}
		return tool.ApproveAlways, nil, nil
	case "p", "pick":
		if pick {
			return t.pick(req)
		}
	case "c", "command":
		if rules {
			for _, p := range req.CommandRules {
				if err := t.allowCommand(p); err != nil {
					fmt.Fprintf(t.out, "the rule %s was not added: %s; only this call is approved\n", safeText(p), safeText(message(err)))
				}
			}
			return tool.Approve, nil, nil
		}
	}
	return tool.Deny, nil, nil
}

// pick asks about each change of an edit; with none accepted the call is
// denied.
func (t *terminalApprover) pick(req tool.ApprovalRequest) (tool.Decision, []bool, error) {
	d := req.Diff
	accepted := make([]bool, len(d.Hunks))
	n := 0
	for i := range d.Hunks {
		fmt.Fprintf(t.out, "apply %s? [y/n]: ", d.Describe(i))
		if a := t.answer(); a == "y" || a == "yes" {
			accepted[i] = true
			n++
		}
	}
	if n == 0 {
		return tool.Deny, nil, nil
	}
	return tool.Approve, accepted, nil
}

// answer reads one line of the user's answer, lower-cased and trimmed; ""
// at the end of the input.
func (t *terminalApprover) answer() string {
	line, err := t.in.ReadString('\n')
	if err != nil && line == "" {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(line))
}

var _ tool.HunkApprover = (*terminalApprover)(nil)
