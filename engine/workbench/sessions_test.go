package workbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// bench opens a workbench on a fresh data directory with the environment
// env (nothing else is read from the real environment).
func bench(t *testing.T, env map[string]string) *Workbench {
	t.Helper()
	w, settingsErr, err := Open(t.TempDir(), func(k string) string { return env[k] })
	if err != nil || settingsErr != nil {
		t.Fatalf("open: %v, settings: %v", err, settingsErr)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// newSession creates a stored session made with model, without an
// endpoint and without the user's own AGENTS.md.
func newSession(t *testing.T, w *Workbench, id, model string) {
	t.Helper()
	cfg, err := w.Config(SessionOptions{})
	if err != nil && !errors.Is(err, ErrNoModel) {
		t.Fatal(err)
	}
	cfg.ModelName, cfg.UserConfigDir = model, ""
	if _, err := agent.Create(cfg, id, t.TempDir(), ""); err != nil {
		t.Fatal(err)
	}
}

// appendMessage commits m to the log of the session's cycle c.
func appendMessage(t *testing.T, w *Workbench, id string, c int, m transcript.Message) {
	t.Helper()
	b, err := transcript.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.store.Append(id, c, b); err != nil {
		t.Fatal(err)
	}
}

// supersede records a rebuild of cycle c that kept gone aside, the way
// compaction and purge do.
func supersede(t *testing.T, w *Workbench, id string, c int, reason string, gone []transcript.Superseded) {
	t.Helper()
	blob, _ := json.Marshal(gone)
	sha, err := w.store.PutBlob(blob)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(transcript.RebuildRecord{Reason: reason, Time: time.Now(), Cycle: c, Superseded: sha})
	if _, err := w.store.AddRecord(storage.KindRebuild, id, rec); err != nil {
		t.Fatal(err)
	}
}

// exportAll returns the lines Export passes, and its error.
func exportAll(w *Workbench, id string) ([][]byte, error) {
	var lines [][]byte
	err := w.Export(id, func(l []byte) error {
		lines = append(lines, bytes.Clone(l))
		return nil
	})
	return lines, err
}

func TestExportGivesEveryCycleWithSupersededMessagesFirst(t *testing.T) {
	w := bench(t, nil)
	newSession(t, w, "s", "deepseek-chat")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	appendMessage(t, w, "s", 1, transcript.UserText("", "first question", at))
	appendMessage(t, w, "s", 1, transcript.AssistantReply("first answer", "", nil, at))
	supersede(t, w, "s", 1, "purge", []transcript.Superseded{{Index: 1, Message: transcript.AssistantReply("a long answer, purged", "", nil, at)}})
	supersede(t, w, "s", 2, "manual compaction", nil) // another cycle's rebuild stays there
	appendMessage(t, w, "s", 2, transcript.UserText("", "second cycle", at))

	lines, err := exportAll(w, "s")
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		cycle      int
		seq        bool
		superseded string
		text       string
	}
	wants := []want{
		{1, false, "purge", "a long answer, purged"},
		{1, true, "", "first question"},
		{1, true, "", "first answer"},
		{2, true, "", "second cycle"},
	}
	if len(lines) != len(wants) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(wants), bytes.Join(lines, nil))
	}
	for i, l := range lines {
		if !bytes.HasSuffix(l, []byte("\n")) || bytes.Count(l, []byte("\n")) != 1 {
			t.Errorf("line %d is not one JSON line: %q", i, l)
		}
		var got ExportLine
		if err := json.Unmarshal(l, &got); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		wt := wants[i]
		if got.Session != "s" || got.Cycle != wt.cycle || (got.Seq != 0) != wt.seq || got.SupersededBy != wt.superseded || got.Message.Text() != wt.text {
			t.Errorf("line %d = %s; want cycle %d, seq %v, superseded by %q, text %q", i, l, wt.cycle, wt.seq, wt.superseded, wt.text)
		}
		if (got.Index != nil) != (wt.superseded != "") || (got.Index != nil && *got.Index != 1) {
			t.Errorf("line %d index = %v", i, got.Index)
		}
	}
}

func TestExportStopsAtTheCallersErrorAndRefusesUnknownSessions(t *testing.T) {
	w := bench(t, nil)
	newSession(t, w, "s", "deepseek-chat")
	for i := 0; i < 3; i++ {
		appendMessage(t, w, "s", 1, transcript.UserText("", "hello", time.Now()))
	}
	stop := errors.New("disk full")
	calls := 0
	err := w.Export("s", func([]byte) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("export went on after the caller's error: %d calls, %v", calls, err)
	}
	if _, err := exportAll(w, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("export of a missing session: %v; want ErrNotFound", err)
	}
}

func TestExportPassesWhatPrecedesDamageThenSaysWhere(t *testing.T) {
	w := bench(t, nil)
	newSession(t, w, "s", "deepseek-chat")
	appendMessage(t, w, "s", 1, transcript.UserText("", "kept", time.Now()))
	seq, err := w.store.Append("s", 2, []byte("{not a message"))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := exportAll(w, "s")
	if len(lines) != 1 || !strings.Contains(string(lines[0]), "kept") {
		t.Errorf("lines before the damage: %q", lines)
	}
	if err == nil || !strings.Contains(err.Error(), "cycle 2 message") || !strings.Contains(err.Error(), "message "+strconv.FormatUint(seq, 10)) {
		t.Errorf("error = %v; want it to name cycle 2 message %d", err, seq)
	}

	// A rebuild whose kept-aside messages are gone is named, not skipped.
	w2 := bench(t, nil)
	newSession(t, w2, "s", "deepseek-chat")
	rec, _ := json.Marshal(transcript.RebuildRecord{Reason: "purge", Time: time.Now(), Cycle: 1, Superseded: strings.Repeat("ab", 32)})
	if _, err := w2.store.AddRecord(storage.KindRebuild, "s", rec); err != nil {
		t.Fatal(err)
	}
	appendMessage(t, w2, "s", 1, transcript.UserText("", "live", time.Now()))
	if _, err := exportAll(w2, "s"); err == nil || !strings.Contains(err.Error(), "superseded by the purge") {
		t.Errorf("missing superseded blob: %v", err)
	}
}

func TestSessionSummariesCountTheCurrentCycle(t *testing.T) {
	w := bench(t, nil)
	newSession(t, w, "a", "deepseek-chat")
	newSession(t, w, "b", "qwen3-8b")
	for i := 0; i < 3; i++ {
		appendMessage(t, w, "b", 1, transcript.UserText("", "old cycle", time.Now()))
	}
	appendMessage(t, w, "b", 2, transcript.UserText("", "new cycle", time.Now()))
	meta, err := w.store.Session("b")
	if err != nil {
		t.Fatal(err)
	}
	meta.Cycle = 2
	if err := w.store.PutSession(meta); err != nil {
		t.Fatal(err)
	}
	appendMessage(t, w, "a", 1, transcript.UserText("", "one", time.Now()))
	appendMessage(t, w, "a", 1, transcript.AssistantReply("two", "", nil, time.Now()))

	list, err := w.SessionSummaries()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]SessionSummary{}
	for _, s := range list {
		got[s.ID] = s
	}
	if len(list) != 2 || got["a"].Messages != 2 || got["b"].Messages != 1 || got["b"].Cycle != 2 || got["b"].Model != "qwen3-8b" {
		t.Errorf("summaries = %+v", list)
	}
	plain, _ := w.Sessions()
	for i := range plain {
		if plain[i].ID != list[i].ID {
			t.Errorf("order differs from Sessions at %d: %s vs %s", i, list[i].ID, plain[i].ID)
		}
	}
}

func TestInspectConfigShowsTheSessionsOwnModel(t *testing.T) {
	// The environment and the settings both choose a model: a run would
	// switch to it, an inspection still shows the session's own.
	w := bench(t, map[string]string{"TALLY_MODEL": "env-model"})
	if err := w.SaveSettings(Settings{Model: "saved-model", ContextWindow: 20000}); err != nil {
		t.Fatal(err)
	}
	newSession(t, w, "s", "qwen3-8b")

	run, err := w.Config(SessionOptions{ID: "s"})
	if !errors.Is(err, ErrNoModel) || run.ModelName != "env-model" {
		t.Fatalf("Config: model %q, err %v", run.ModelName, err)
	}
	cfg, err := w.InspectConfig(SessionOptions{ID: "s"})
	if err != nil {
		t.Fatalf("InspectConfig without an endpoint: %v", err)
	}
	sess, err := agent.Inspect(cfg, "s")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Snapshot().Meta.Model != "qwen3-8b" || sess.Snapshot().Window != 20000 {
		t.Errorf("inspected model %q, window %d; want the session's qwen3-8b and the saved 20000", sess.Snapshot().Meta.Model, sess.Snapshot().Window)
	}
	cfg, err = w.InspectConfig(SessionOptions{ID: "s", Flags: Flags{Model: "gpt-4o"}})
	if err != nil || cfg.ModelName != "gpt-4o" {
		t.Errorf("a model flag: %q, %v", cfg.ModelName, err)
	}
	if _, err := w.InspectConfig(SessionOptions{ID: "s", Compaction: "sometimes"}); err == nil || errors.Is(err, ErrNoModel) {
		t.Errorf("an invalid override was not an error of its own: %v", err)
	}
}

func TestTheDemoSessionHasOneWindowForAppAndCommandLine(t *testing.T) {
	w := bench(t, map[string]string{"TALLY_BASE_URL": "http://127.0.0.1:1/v1"})
	cfg, err := w.Config(SessionOptions{Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg.UserConfigDir = ""
	if _, err := agent.Create(cfg, "demo", t.TempDir(), "Demo"); err != nil {
		t.Fatal(err)
	}
	app, err := w.Config(SessionOptions{ID: "demo", Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := w.Config(SessionOptions{ID: "demo"}) // what `tally run --session demo` asks
	if err != nil {
		t.Fatal(err)
	}
	ins, err := w.InspectConfig(SessionOptions{ID: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := agent.Inspect(ins, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if !app.MCP.Off || !cli.MCP.Off {
		t.Error("a demo session would start the user's MCP servers")
	}
	if app.ContextWindow != cli.ContextWindow || sess.Snapshot().Window != app.ContextWindow || cli.ModelName != app.ModelName {
		t.Errorf("app %s/%d, command line %s/%d, inspect %d: one stored session, one window",
			app.ModelName, app.ContextWindow, cli.ModelName, cli.ContextWindow, sess.Snapshot().Window)
	}
}

// The Archive used to start mid-cycle: messages a compaction superseded
// before the cycle closed were missing (issue 12 #2). An archived cycle
// holds every message it ever had.
func TestArchivesHoldEveryMessageOfAClosedCycle(t *testing.T) {
	w := bench(t, nil)
	newSession(t, w, "s", "deepseek-chat")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	appendMessage(t, w, "s", 1, transcript.AssistantReply("after the compaction", "", nil, at))
	supersede(t, w, "s", 1, "compaction", []transcript.Superseded{{Index: 0, Message: transcript.UserText("", "the user's first prompt", at)}})
	rec, _ := json.Marshal(map[string]any{"cycle": 1, "started": at, "ended": at, "brief": "b", "tokens": 10, "requests": 2})
	if _, err := w.store.AddRecord(storage.KindArchive, "s", rec); err != nil {
		t.Fatal(err)
	}
	arch, err := w.Archives("s")
	if err != nil || len(arch) != 1 {
		t.Fatalf("archives %v, %v", arch, err)
	}
	var texts []string
	for _, m := range arch[0].Messages {
		texts = append(texts, m.Text())
	}
	if strings.Join(texts, "|") != "the user's first prompt|after the compaction" {
		t.Errorf("archived cycle 1 holds %q", texts)
	}

	// The app's archive browser reads through the session: it showed
	// the cycle's final log only, `tally archive` every message.
	cfg, err := w.Config(SessionOptions{})
	if err != nil && !errors.Is(err, ErrNoModel) {
		t.Fatal(err)
	}
	cfg.UserConfigDir = ""
	sess, err := agent.Open(cfg, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	app, err := sess.Compaction().Archives()
	if err != nil || len(app) != 1 || len(app[0].Messages) != len(arch[0].Messages) {
		t.Fatalf("the app's archive: %+v, %v; want the %d messages tally archive shows", app, err, len(arch[0].Messages))
	}
	for i := range app[0].Messages {
		if app[0].Messages[i].Text() != arch[0].Messages[i].Text() {
			t.Errorf("message %d: the app shows %q, tally archive %q", i, app[0].Messages[i].Text(), arch[0].Messages[i].Text())
		}
	}
}

func TestSearchFindsTitlesPromptsAnswersAndToolCallsInEveryCycle(t *testing.T) {
	w := bench(t, nil)
	newSession(t, w, "a", "deepseek-chat")
	newSession(t, w, "b", "deepseek-chat")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	appendMessage(t, w, "a", 1, transcript.UserText("", "Why does Mul overflow?", at))
	call := transcript.ToolCall{ID: "c1", Name: "grep", Arguments: `{"pattern":"func Mul"}`}
	appendMessage(t, w, "a", 1, transcript.AssistantReply("", "", []transcript.ToolCall{call}, at))
	supersede(t, w, "a", 1, "compaction", []transcript.Superseded{{Index: 0, Message: transcript.AssistantReply("Mul uses int8 overflow math", "", nil, at)}})
	appendMessage(t, w, "b", 1, transcript.UserText("", "unrelated question", at))
	if err := w.Rename("b", "Overflow notes"); err != nil {
		t.Fatal(err)
	}

	hits, truncated, err := w.Search("mul OVERFLOW")
	if err != nil || truncated {
		t.Fatalf("search: %v, truncated %v", err, truncated)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.Session+":"+h.Snippet)
		if h.Session == "a" && h.Snippet == "Mul uses int8 overflow math" && !h.Superseded {
			t.Error("the superseded answer is not marked")
		}
	}
	want := "a:Mul uses int8 overflow math|a:Why does Mul overflow?"
	if strings.Join(got, "|") != want {
		t.Errorf("hits %q, want %q", got, want)
	}
	if hits, _, _ := w.Search("func mul"); len(hits) != 1 || hits[0].Message.ToolCalls[0].Name != "grep" {
		t.Errorf("a tool call's arguments are not searched: %+v", hits)
	}
	if hits, _, _ := w.Search("overflow notes"); len(hits) != 1 || hits[0].Session != "b" || hits[0].Cycle != 0 {
		t.Errorf("a title is not found: %+v", hits)
	}
}

// TryOpen is the command line's first look at the store: it fails with
// ErrLocked while another Tally holds the store, and opens it otherwise.
func TestTryOpenTellsAHeldStoreAndOpensAFreeOne(t *testing.T) {
	dir := t.TempDir()
	held, _, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w, _, err := TryOpen(dir, nil); !errors.Is(err, ErrLocked) {
		if w != nil {
			w.Close()
		}
		t.Fatalf("TryOpen of a held store: %v; want ErrLocked", err)
	}
	held.Close()
	w, _, err := TryOpen(dir, nil)
	if err != nil {
		t.Fatalf("TryOpen of a free store: %v", err)
	}
	w.Close()
}
