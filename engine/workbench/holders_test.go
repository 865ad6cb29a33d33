package workbench

import (
	"errors"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/agent"
)

// The app's window and an editor connected through the app (a borrowed
// view) each open sessions for turns; one session open in both would
// take turns from two logs of itself. Opening a session another holder
// has open fails with ErrInUse, saying where it is open, until that
// holder closes it; a holder may open its own session again.
func TestASessionIsOpenForOneHolderAtATime(t *testing.T) {
	env := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test"
		}
		return ""
	}
	w, _, err := Open(t.TempDir(), env)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	editor := w.Borrow(Holder{Where: "an editor", Free: "close it in the editor and try again"}, nil)
	config := func(on *Workbench, id string) agent.Config {
		t.Helper()
		c, err := on.Config(SessionOptions{ID: id, Flags: Flags{BaseURL: "http://127.0.0.1:9/v1", Model: "m"}})
		if err != nil {
			t.Fatal(err)
		}
		c.UserConfigDir = ""
		return c
	}
	ws := t.TempDir()
	mine, err := editor.CreateSession(config(editor, ""), ws, "")
	if err != nil {
		t.Fatal(err)
	}
	id := mine.Snapshot().Meta.ID
	_, err = w.OpenSession(config(w, id), id)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "is open in an editor; close it in the editor and try again") {
		t.Fatalf("the app opened the editor's session: %v", err)
	}
	again, err := editor.OpenSession(config(editor, id), id)
	if err != nil {
		t.Fatalf("the editor could not open its own session again: %v", err)
	}
	again.Close()
	if _, err := w.OpenSession(config(w, id), id); !errors.Is(err, ErrInUse) {
		t.Fatalf("one of the editor's two opens closed, and the app opened the session: %v", err)
	}
	mine.Close()
	mine.Close() // closing twice gives the session back once
	app, err := w.OpenSession(config(w, id), id)
	if err != nil {
		t.Fatalf("the app could not open the session the editor closed: %v", err)
	}
	other := w.Borrow(Holder{Where: "another editor", Free: "close it there"}, nil)
	if _, err := other.OpenOrCreateSession(config(other, id), id, ws); !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "open in the Tally app") {
		t.Errorf("an editor opened the app's session: %v", err)
	}
	app.Close()
	if s, err := other.OpenOrCreateSession(config(other, id), id, ws); err != nil {
		t.Errorf("an editor could not open the session the app closed: %v", err)
	} else {
		s.Close()
	}
	// Read-only views are nobody's.
	r, err := w.OpenSession(config(w, id), id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if s, err := other.InspectSession(config(other, id), id); err != nil {
		t.Errorf("reading the app's session: %v", err)
	} else {
		s.Close()
	}
}
