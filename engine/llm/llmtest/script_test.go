package llmtest

import "testing"

func TestSequenceAndHelpers(t *testing.T) {
	replies := []Reply{Text("a"), Call("shell", `{"cmd":"ls"}`)}
	s := Sequence(replies...)
	replies[0].Content = "mutated"
	got := []Reply{s.Reply(&Req{}), s.Reply(&Req{}), s.Reply(&Req{})}
	if got[0].Content != "a" {
		t.Errorf("Sequence did not copy its replies: %q", got[0].Content)
	}
	if len(got[1].ToolCalls) != 1 || got[1].ToolCalls[0].Name != "shell" || got[1].ToolCalls[0].ID != "" {
		t.Errorf("Call reply = %+v", got[1])
	}
	if got[2].Content != ExhaustedContent {
		t.Errorf("exhausted reply = %+v", got[2])
	}
	if r := ScriptFunc(nil).Reply(&Req{}); r.Content != ExhaustedContent {
		t.Errorf("nil ScriptFunc reply = %+v", r)
	}
	if Fault429.String() != "Fault429" || Fault(99).String() != "Fault(99)" {
		t.Errorf("Fault.String broken")
	}
}

func TestScriptPanicBecomes500(t *testing.T) {
	srv := New(ScriptFunc(func(*Req) Reply { panic("boom") }))
	defer srv.Close()
	status, _, b := post(t, srv, chat(msg("user", "x")))
	if status != 500 || srv.Requests()[0].Fault != Fault500 || errorMessage(t, b) != "llmtest: the script panicked: boom" {
		t.Errorf("status %d: %s", status, b)
	}
}

func TestPieces(t *testing.T) {
	for _, s := range []string{"", "abc", "héllo wörld, 世界世界世界", "exactly12byt"} {
		var joined string
		for _, p := range pieces(s, 5) {
			if len(p) > 5 || p == "" {
				t.Errorf("%q: bad piece %q", s, p)
			}
			joined += p
		}
		if joined != s {
			t.Errorf("%q: pieces join to %q", s, joined)
		}
	}
}
