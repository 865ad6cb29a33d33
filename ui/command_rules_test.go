package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/ui/internal/fynetest"
	tw "github.com/tally-dev/tally/ui/widget"
)

// entryIn returns the first text field under o.
func entryIn(o fyne.CanvasObject) *widget.Entry {
	var found *widget.Entry
	fynetest.Walk(o, func(c fyne.CanvasObject) bool {
		if e, ok := c.(*tw.EscEntry); ok && found == nil {
			found = &e.Entry
		} else if e, ok := c.(*widget.Entry); ok && found == nil {
			found = e
		}
		return found == nil
	})
	return found
}

// "Always allow this command…" on a command's card stores a rule for the
// workspace (widened by the user here), the next matching command runs
// without asking, and the Rules dialog lists the rule with Revoke, after
// which the command asks again.
func TestCommandRuleFromTheCardListedAndRevoked(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("run_shell", `{"command":"echo one"}`), llmtest.Text("ran"),
		llmtest.Call("run_shell", `{"command":"echo one more"}`), llmtest.Text("ran again"),
		llmtest.Call("run_shell", `{"command":"echo one"}`), llmtest.Text("asked"),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	h.newSession()
	perms := func() []string {
		rules, err := h.ui.live.sess.Permissions().CommandRules()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rules {
			out = append(out, r.Pattern)
		}
		return out
	}

	h.send("run one")
	it := h.pending()
	c := h.card(it)
	if c == nil || !c.CmdRow.Visible() || c.Command.Text != "Always allow this command…" {
		t.Fatalf("the card offers no command rule: %+v", c)
	}
	test.Tap(c.Command)
	form := h.win.Canvas().Overlays().Top()
	e := entryIn(form)
	if e == nil || e.Text != "echo one" {
		t.Fatalf("the rule's field = %+v; want the exact command", e)
	}
	e.SetText("echo one; rm -rf ~")
	if e.Validate() == nil {
		t.Error("the field accepts two commands")
	}
	e.SetText("echo one *")
	test.Tap(buttonIn(form, "Allow"))
	h.waitIdle()
	if got := perms(); len(got) != 1 || got[0] != "echo one *" {
		t.Fatalf("rules = %q; want the widened rule", got)
	}
	if !strings.Contains(it.Decided, "`echo one *`") || !strings.Contains(it.Result, "one") {
		t.Errorf("the card says %q, result %q", it.Decided, it.Result)
	}

	h.send("run one more")
	h.waitIdle()
	for _, x := range h.ui.chat.Items {
		if x.Approval != nil {
			t.Fatal("a command the rule covers asked")
		}
	}

	test.Tap(h.ui.head.perm.rules)
	h.waitFor("the Rules dialog", func() bool { return h.ui.head.perm.cmdRevoke["echo one *"] != nil })
	if !h.overlayShows("Allow `echo one *`") {
		t.Error("the Rules dialog does not list the rule")
	}
	// A deny rule is added from the dialog too.
	h.ui.head.perm.cmdEntry.SetText("rm *")
	test.Tap(h.ui.head.perm.cmdDeny)
	h.waitFor("the deny rule", func() bool { return h.ui.head.perm.cmdRevoke["rm *"] != nil })
	if got := perms(); len(got) != 2 || got[0] != "rm *" {
		t.Errorf("rules = %q; want rm * first", got)
	}
	test.Tap(h.ui.head.perm.cmdRevoke["echo one *"])
	h.waitFor("the revoke", func() bool { return len(perms()) == 1 })
	// The store has it before the chat says so: the word comes on the
	// UI goroutine after the revoke returned.
	h.waitFor("the word that the rule was revoked", func() bool { return h.shows("no longer applies") })

	h.send("run one again")
	h.pending() // asks again after the revoke
}
