package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/internal/text"
)

// formAnswerer answers the forms MCP servers ask for during a command's
// tool calls: on a terminal each field is a question with its default in
// brackets (Enter takes it); with --yes the defaults are accepted;
// otherwise the form is declined, saying why on standard error. A page a
// server asks to be opened (URL mode) is shown on a terminal and never
// accepted by --yes (see page).
type formAnswerer struct {
	cmd  string            // the command, for messages ("tally run")
	yes  bool              // --yes: accept the defaults
	term *terminalApprover // the terminal to ask on, nil when there is none
	out  io.Writer         // standard error

	mu     sync.Mutex
	failed error // why --yes could not answer a form, if it could not
}

// newFormAnswerer returns the answerer of cmd; term is the terminal the
// command's approvals are asked on (nil to make one of stdin when it is a
// terminal), so that a form and an approval never share the screen.
func newFormAnswerer(cmd string, yes bool, stdin io.Reader, stderr io.Writer, term *terminalApprover) *formAnswerer {
	if term == nil && !yes {
		if f, ok := terminalIn(stdin); ok {
			term = &terminalApprover{in: bufio.NewReader(f), out: stderr}
		}
	}
	return &formAnswerer{cmd: cmd, yes: yes, term: term, out: stderr}
}

// failure is why --yes could not answer a form, nil when it could (or was
// not given).
func (a *formAnswerer) failure() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failed
}

// answer is the mcp.Options.Elicit of the command.
func (a *formAnswerer) answer(_ context.Context, f mcp.Form) (mcp.Reply, error) {
	server, what := safeText(f.Server), safeText(text.OneLine(f.Message, quoteRunes))
	if f.Page() {
		return a.page(f)
	}
	switch {
	case a.yes:
		r, err := f.AcceptDefaults()
		if err != nil {
			err = fmt.Errorf("%s: --yes cannot answer the form of the MCP server %q (%q): %s; it was declined, so run on a terminal to fill it in", a.cmd, server, what, err)
			fmt.Fprintln(a.out, err)
			a.mu.Lock()
			a.failed = err
			a.mu.Unlock()
			return mcp.Declined, nil
		}
		fmt.Fprintf(a.out, "%s: accepted the form of the MCP server %q (%q) with its defaults (--yes)\n", a.cmd, server, what)
		return r, nil
	case a.term != nil:
		return a.ask(f)
	}
	fmt.Fprintf(a.out, "%s: the MCP server %q asks for a form (%q), but standard input is not a terminal to ask on, so it was declined; run on a terminal to fill it in, or accept its defaults with --yes\n", a.cmd, server, what)
	return mcp.Declined, nil
}

// ask puts each field of f to the user on the terminal, then asks whether
// to send the answers. The end of the input cancels the form.
func (a *formAnswerer) ask(f mcp.Form) (mcp.Reply, error) {
	t := a.term
	t.turn.Lock()
	defer t.turn.Unlock()
	fmt.Fprintf(t.out, "\nThe MCP server %q asks you to fill in a form:\n", safeText(f.Server))
	for line := range strings.SplitSeq(strings.TrimSpace(f.Message), "\n") {
		fmt.Fprintf(t.out, "  %s\n", safeText(line))
	}
	content := map[string]any{}
	if len(f.Fields) > 0 {
		fmt.Fprintln(t.out, "(Enter keeps the value in brackets; * marks a required field.)")
	}
	for _, fd := range f.Fields {
		v, ok := a.askField(fd)
		if !ok {
			fmt.Fprintln(t.out, "form cancelled")
			return mcp.Cancelled, nil
		}
		if v != nil {
			content[fd.Name] = v
		}
	}
	switch a.choose("Send these answers? [Y]es / [n]o, decline / [c]ancel: ", true, "form") {
	case mcp.ActionAccept:
		r, err := f.Accept(content)
		if err != nil {
			fmt.Fprintf(t.out, "  %s; the form was declined\n", safeText(err.Error()))
			return mcp.Declined, nil
		}
		return r, nil
	case mcp.ActionDecline:
		return mcp.Declined, nil
	}
	return mcp.Cancelled, nil
}

// choose asks question until the answer is yes, no or cancel (Enter is
// yes when enterAccepts) and returns it as the reply's action; the end
// of the input cancels the form or page (what).
func (a *formAnswerer) choose(question string, enterAccepts bool, what string) mcp.Action {
	t := a.term
	for {
		fmt.Fprint(t.out, question)
		line, ok := readLine(t.in)
		if !ok && line == "" {
			fmt.Fprintf(t.out, "\n%s cancelled\n", what)
			return mcp.ActionCancel
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return mcp.ActionAccept
		case "":
			if enterAccepts {
				return mcp.ActionAccept
			}
		case "n", "no":
			return mcp.ActionDecline
		case "c", "cancel":
			return mcp.ActionCancel
		}
		if !ok {
			return mcp.ActionCancel
		}
		fmt.Fprintln(t.out, "  answer y, n or c")
	}
}

// askField asks for one field until the answer fits, and returns it (nil
// for "left out": its default, if any, applies). ok is false at the end
// of the input.
func (a *formAnswerer) askField(fd mcp.Field) (any, bool) {
	t := a.term
	if fd.Description != "" && fd.Description != fd.Title {
		fmt.Fprintf(t.out, "  %s\n", safeText(text.OneLine(fd.Description, 300)))
	}
	if fd.Kind == mcp.KindChoice || fd.Kind == mcp.KindChoices {
		for i, c := range fd.Choices {
			fmt.Fprintf(t.out, "    %d) %s\n", i+1, safeText(text.OneLine(c.Label(), 120)))
		}
	}
	q := question(fd)
	for {
		fmt.Fprint(t.out, q)
		line, ok := readLine(t.in)
		if !ok && line == "" {
			fmt.Fprintln(t.out)
			return nil, false
		}
		v, err := fd.Parse(line)
		switch {
		case err != nil:
			fmt.Fprintf(t.out, "  %s\n", safeText(err.Error()))
		case v == nil && fd.Required && fd.Default == nil:
			fmt.Fprintf(t.out, "  %q is required; give it a value\n", safeText(fd.Label()))
		default:
			return v, true
		}
		if !ok {
			return nil, false
		}
	}
}

// question is the prompt of a field: its label, a hint of what it takes,
// and its default in brackets.
func question(fd mcp.Field) string {
	var b strings.Builder
	b.WriteString(safeText(text.OneLine(fd.Label(), 120)))
	if fd.Required {
		b.WriteString("*")
	}
	if h := hint(fd); h != "" {
		b.WriteString(" (" + h + ")")
	}
	switch {
	case fd.Kind == mcp.KindBoolean && fd.Default == true:
		b.WriteString(" [Y/n]")
	case fd.Kind == mcp.KindBoolean && fd.Default == false:
		b.WriteString(" [y/N]")
	case fd.Kind == mcp.KindBoolean:
		b.WriteString(" [y/n]")
	case fd.Default != nil:
		b.WriteString(" [" + safeText(text.OneLine(fd.Text(fd.Default), 120)) + "]")
	}
	return b.String() + ": "
}

// hint says what a field takes beyond its kind's obvious form.
func hint(fd mcp.Field) string {
	switch fd.Kind {
	case mcp.KindChoice:
		return "a number or a value"
	case mcp.KindChoices:
		return "numbers or values, separated by commas"
	case mcp.KindInteger, mcp.KindNumber:
		what := "a number"
		if fd.Kind == mcp.KindInteger {
			what = "a whole number"
		}
		switch {
		case fd.Min != nil && fd.Max != nil:
			return fmt.Sprintf("%s from %s to %s", what, fd.Text(*fd.Min), fd.Text(*fd.Max))
		case fd.Min != nil:
			return fmt.Sprintf("%s, at least %s", what, fd.Text(*fd.Min))
		case fd.Max != nil:
			return fmt.Sprintf("%s, at most %s", what, fd.Text(*fd.Max))
		}
		return what
	case mcp.KindString:
		switch fd.Format {
		case "email":
			return "an email address"
		case "uri":
			return "an address such as https://…"
		case "date":
			return "a date, YYYY-MM-DD"
		case "date-time":
			return "a date and time, such as 2025-03-31T14:30:00Z"
		}
	}
	return ""
}

// readLine reads one line without its line ending; ok is false at the
// end of the input (line then holds what came before it).
func readLine(in *bufio.Reader) (string, bool) {
	line, err := in.ReadString('\n')
	line = strings.TrimRight(line, "\r\n")
	return line, err == nil
}

// sessionForms answers the forms of a `tally run` session: each
// EventForm is answered off the event's goroutine (which must not wait)
// and the answer given through the session's front door.
type sessionForms struct {
	a     *formAnswerer
	ready chan struct{} // closed once sess is set
	sess  *agent.Session
}

func newSessionForms(a *formAnswerer) *sessionForms {
	return &sessionForms{a: a, ready: make(chan struct{})}
}

// open sets the session the forms are answered in; call it once.
func (s *sessionForms) open(sess *agent.Session) {
	s.sess = sess
	close(s.ready)
}

// event answers an EventForm, and says on out when a form was withdrawn
// because its call ended.
func (s *sessionForms) event(e agent.Event, out io.Writer) {
	switch {
	case e.Form == nil:
	case e.Kind == agent.EventForm:
		req := *e.Form
		go func() {
			r, _ := s.a.answer(context.Background(), req.Form)
			<-s.ready
			_ = s.sess.MCP().AnswerForm(req.ID, r) // fails only when the form was withdrawn meanwhile
		}()
	case e.Kind == agent.EventFormDone && e.Reason == "withdrawn":
		fmt.Fprintf(out, "MCP: the form of the server %q was withdrawn: its call ended before it was answered\n", safeText(e.Form.Form.Server))
	}
}
