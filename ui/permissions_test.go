package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/tool"
)

// The approval card used to clip long arguments; a command padded with
// spaces hid "; touch SPOOFED". The card shows the whole command.
func TestApprovalCardShowsTheWholeCommand(t *testing.T) {
	cmd := "echo harmless" + strings.Repeat(" ", 250) + "; touch SPOOFED"
	args, _ := json.Marshal(map[string]string{"command": cmd + strings.Repeat(" ", 4000) + "; echo tail-end"})
	srv := llmtest.New(llmtest.Sequence(llmtest.Call("run_shell", string(args)), llmtest.Text("ok")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()
	h.send("run it")
	it := h.pending()
	c := h.card(it)
	if c == nil {
		t.Fatal("the pending card is not on screen")
	}
	for _, want := range []string{"⟨250 spaces⟩; touch SPOOFED", "; echo tail-end"} {
		if !strings.Contains(c.Args.Text, want) {
			t.Errorf("the card hides %q:\n%s", want, c.Args.Text)
		}
	}
	test.Tap(c.Deny)
	h.waitIdle()
	if _, err := os.Stat(filepath.Join(ws, "SPOOFED")); !os.IsNotExist(err) {
		t.Error("a denied command ran")
	}
}

// The header's mode picker decides what runs, what asks and what is
// refused, and "always allow" shows up as a rule the user can revoke.
func TestModePickerAndRules(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(
		llmtest.Call("write_file", `{"path":"ro.txt","content":"x"}`), llmtest.Text("refused"),
		llmtest.Call("write_file", `{"path":"auto.txt","content":"x"}`), llmtest.Text("written"),
		llmtest.Call("run_shell", `{"command":"echo one"}`), llmtest.Text("ran"),
		llmtest.Call("run_shell", `{"command":"echo two"}`), llmtest.Text("ran again"),
	))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()
	h.waitFor("the permission bar", func() bool { return h.ui.head.perm.box.Visible() })
	if h.ui.head.perm.mode.Selected != tool.ModeAsk.Label() {
		t.Fatalf("a new session starts in %q, want Ask", h.ui.head.perm.mode.Selected)
	}
	setMode := func(m tool.Mode) {
		h.ui.head.perm.mode.SetSelected(m.Label())
		h.waitFor("the mode to apply", func() bool { return h.ui.live.sess.Permissions().Mode() == m })
	}

	setMode(tool.ModeReadOnly)
	h.send("write ro.txt")
	h.waitIdle()
	if _, err := os.Stat(filepath.Join(ws, "ro.txt")); !os.IsNotExist(err) {
		t.Error("read-only mode let a write through")
	}
	if it := h.toolItem("write_file"); it == nil || !strings.Contains(it.Result, "read-only mode") {
		t.Errorf("the refused card does not say why: %+v", it)
	}

	setMode(tool.ModeAutoEdit)
	h.send("write auto.txt")
	h.waitIdle()
	if _, err := os.Stat(filepath.Join(ws, "auto.txt")); err != nil {
		t.Errorf("auto-edit mode did not apply the edit without asking: %v", err)
	}

	// Commands still ask in auto-edit; "always" becomes a rule.
	h.send("run one")
	it := h.pending()
	c := h.card(it)
	if h.ui.live.sess.Permissions().Sandboxed() != c.Always.Visible() {
		t.Errorf("Always allow shown %v for a command with sandbox %v; it is offered only inside the sandbox", c.Always.Visible(), h.ui.live.sess.Permissions().Sandboxed())
	}
	if !h.ui.live.sess.Permissions().Sandboxed() {
		t.Skip("commands cannot be sandboxed here, so there is no always-allow rule to revoke")
	}
	test.Tap(c.Always)
	h.waitIdle()
	if got := h.ui.live.sess.Permissions().Rules(); len(got) != 1 || got[0] != "run_shell" {
		t.Fatalf("rules = %v, want [run_shell]", got)
	}
	h.ui.live.sess.Permissions().Revoke("run_shell")
	h.send("run two")
	h.pending() // asks again after the revoke
}

// A secret in a tool result is redacted before the card sees it, and the
// card says how many were.
func TestToolCardCountsRedactedSecrets(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Call("read_file", `{"path":"config.txt"}`), llmtest.Text("ok")))
	defer srv.Close()
	h := newHarness(t, endpoint(srv))
	ws := h.newSession()
	key := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	others := []string{"AKIA" + "QZ4XK7RW2M5PLJ3N", "sk-proj-" + strings.Repeat("Xy7Qp2Lm9Rt4", 4) + "T3BlbkFJ" + strings.Repeat("Kd8Wn3Vb6Hs1", 4),
		"MIIEowIBAAKCAQEA" + strings.Repeat("q8Zr3Tn5Wm2Yk7Xp", 3)}
	body := "token = " + key + "\naws_access_key_id = " + others[0] + "\nOPENAI_API_KEY=" + others[1] +
		"\n-----BEGIN RSA PRIVATE KEY-----\n" + others[2] + "\n-----END RSA PRIVATE KEY-----\n"
	if err := os.WriteFile(filepath.Join(ws, "config.txt"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	h.send("read config.txt")
	h.waitIdle()
	it := h.toolItem("read_file")
	if it == nil || it.Redacted == 0 {
		t.Fatalf("the card counts no redaction: %+v", it)
	}
	if h.shows(key) || strings.Contains(it.Result, key) {
		t.Error("the secret reached the screen")
	}
	it.Expanded = true
	h.ui.chat.RefreshItem(it)
	for _, s := range append(others, key) {
		if h.shows(s) || strings.Contains(it.Result, s) {
			t.Errorf("a secret reached the screen: %s…", s[:8])
		}
	}
	if c := h.card(it); c == nil || !strings.Contains(c.Status.Text, "secret") {
		t.Errorf("the card's status does not mention the redaction")
	}
}
