//go:build realmodel

// The real-model checks: Tally's own binary against SmolLM2-135M-Instruct
// served by llama.cpp's llama-server on this machine, through a logging
// proxy that records llama-server's per-request timings. run.sh fetches
// the model, builds llama-server and tally, and runs these with the
// environment they read:
//
//	REALMODEL_SERVER  the llama-server binary
//	REALMODEL_MODEL   the GGUF file
//	REALMODEL_TALLY   the tally binary
//	REALMODEL_OUT     where the tables and the exchanges are written
//
//	REALMODEL_SHORT   1 for the short form `make test` runs: TestWire's
//	                  first turn (two requests), the other tests skipped
package realmodel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/internal/realmodel"
)

var env struct{ server, model, tally, out, template string }

// short reports whether the short form runs (REALMODEL_SHORT=1).
func short() bool { return os.Getenv("REALMODEL_SHORT") == "1" }

func TestMain(m *testing.M) {
	env.server = os.Getenv("REALMODEL_SERVER")
	env.model = os.Getenv("REALMODEL_MODEL")
	env.tally = os.Getenv("REALMODEL_TALLY")
	env.out = os.Getenv("REALMODEL_OUT")
	if env.out == "" {
		env.out = filepath.Join(os.TempDir(), "tally-realmodel-out")
	}
	wd, _ := os.Getwd()
	env.template = filepath.Join(wd, "chatml-tools.jinja")
	os.Exit(m.Run())
}

// turnTimeout bounds one tally command. A turn of SmolLM2 takes a
// minute or two on two shared cores; the request after a compaction,
// whose whole prompt is evaluated afresh, took over five while other
// work ran (Tally's own timeouts, 3 minutes to the first byte and 90 s
// of silence, were never reached: the answer was streaming).
const turnTimeout = 15 * time.Minute

// rig is one llama-server, the logging proxy in front of it and tally
// pointed at the proxy, in a fixed folder (so the prompts, which name the
// workspace, are the same on every run).
type rig struct {
	t     *testing.T
	srv   *realmodel.Server
	proxy *realmodel.Proxy
	tally realmodel.Tally
	root  string
}

func newRig(t *testing.T, name string, o realmodel.ServerOptions) *rig {
	t.Helper()
	if env.server == "" || env.model == "" || env.tally == "" {
		t.Fatal("REALMODEL_SERVER, REALMODEL_MODEL and REALMODEL_TALLY are not set; run make realmodel (scripts/realmodel/run.sh)")
	}
	root := filepath.Join(os.TempDir(), "tally-realmodel", name)
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(env.out, 0o755); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(env.out, name+"-llama-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	o.Binary, o.Model, o.Log = env.server, env.model, log
	start := time.Now()
	srv, err := realmodel.StartServer(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("llama-server ready in %s: %s", time.Since(start).Round(time.Millisecond), strings.Join(srv.Args, " "))
	p := realmodel.NewProxy(srv.URL)
	front := httptest.NewServer(p)
	r := &rig{t: t, srv: srv, proxy: p, root: root,
		tally: realmodel.Tally{Bin: env.tally, Data: filepath.Join(root, "data"), BaseURL: front.URL + "/v1", Model: "smollm2", Timeout: turnTimeout}}
	t.Cleanup(func() {
		front.Close()
		srv.Stop()
		r.save(name)
	})
	return r
}

// workspace makes a folder under the rig with files.
func (r *rig) workspace(name string, files map[string]string) string {
	r.t.Helper()
	ws := filepath.Join(r.root, name)
	if err := (realmodel.Task{Files: files}).Setup(ws); err != nil {
		r.t.Fatal(err)
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		r.t.Fatal(err)
	}
	return ws
}

// save writes every exchange of the rig as JSON lines to REALMODEL_OUT.
func (r *rig) save(name string) {
	f, err := os.Create(filepath.Join(env.out, name+"-exchanges.jsonl"))
	if err != nil {
		r.t.Error(err)
		return
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, e := range r.proxy.Exchanges() {
		_ = enc.Encode(e)
	}
}

// turn runs one turn and fails the test on a crash or a hang (a failed
// turn, such as one that hit the step limit, is not a failure here).
func (r *rig) turn(session, ws, prompt string, flags ...string) (realmodel.Result, []realmodel.Event) {
	r.t.Helper()
	res, events := r.tally.Run(context.Background(), session, ws, prompt, flags...)
	r.t.Logf("tally run %q: exit %d in %s, %d events", clip(prompt), res.Exit, res.Duration.Round(time.Millisecond), len(events))
	if res.Crashed || res.Hung {
		r.t.Fatalf("tally run %q: %v\n%s", prompt, res.Err(), res.Stderr)
	}
	if res.Exit != 0 && res.Exit != 1 {
		r.t.Fatalf("tally run %q: %v", prompt, res.Err())
	}
	if !r.srv.Alive() {
		r.t.Fatal("llama-server died")
	}
	return res, events
}

// writeOut writes a table to REALMODEL_OUT and logs it.
func writeOut(t *testing.T, name, text string) {
	t.Helper()
	t.Logf("%s:\n%s", name, text)
	if err := os.WriteFile(filepath.Join(env.out, name), []byte(text), 0o644); err != nil {
		t.Error(err)
	}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// checkExchanges fails the test for a chat request that was refused, an
// answer that did not stream or lacks its usage or timings, or a stored
// session that disagrees with the wire.
func (r *rig) checkExchanges(session string, prompts []string, ex []realmodel.Exchange) {
	r.t.Helper()
	chats := 0
	for _, e := range ex {
		if !e.Chat() {
			continue
		}
		chats++
		switch {
		case e.Status != 200:
			r.t.Errorf("request %d was answered HTTP %d: %s", e.N, e.Status, e.Err)
		case !e.Stream:
			r.t.Errorf("request %d was not answered as a stream", e.N)
		case e.Usage == nil || e.Timings == nil:
			r.t.Errorf("request %d's answer has no usage or no timings", e.N)
		case e.Finish == "":
			r.t.Errorf("request %d's answer has no finish_reason", e.N)
		}
	}
	if chats == 0 {
		r.t.Fatal("no chat request reached llama-server")
	}
	for _, p := range realmodel.SessionProblems(context.Background(), r.tally, session, prompts, ex) {
		r.t.Error(p)
	}
	l, err := r.tally.Ledger(context.Background(), session)
	if err != nil {
		r.t.Fatal(err)
	}
	if len(l.Rows) != chats {
		r.t.Errorf("the ledger has %d rows for %d chat requests", len(l.Rows), chats)
	}
}

// call is a tool call written as the chat template asks for one.
func call(name, args string) string {
	return "<tool_call>\n{\"name\": \"" + name + "\", \"arguments\": " + args + "}\n</tool_call>"
}

// wireFiles is the project of the wire and cache sessions.
var wireFiles = map[string]string{
	"notes.txt": "The build uses Go 1.26.\nThe release is on Friday.\n",
	"app.py":    "def main():\n    print(\"hello\")\n\nmain()\n",
}

// TestWire runs several turns of one session with tools and streaming
// and checks the wire and the store against each other, and that each
// request had only what it added evaluated.
func TestWire(t *testing.T) {
	r := newRig(t, "wire", realmodel.ServerOptions{Template: env.template})
	ws := r.workspace("ws", wireFiles)
	// SmolLM2-135M seldom writes a tool call of its own; shown the call
	// in the prompt, it copies it, and llama-server parses it (its
	// grammar holding the JSON to the tools' schemas).
	prompts := []string{
		"List the files in this folder. Reply with exactly:\n" + call("list_dir", `{"path": "."}`),
		"Read notes.txt and tell me on which day the release is. Reply with exactly:\n" + call("read_file", `{"path": "notes.txt"}`),
		"Create a file done.txt containing the word yes. Reply with exactly:\n" + call("write_file", `{"path": "done.txt", "content": "yes"}`),
		"What did you change? Answer in one sentence.",
	}
	steps := "4"
	if short() {
		prompts, steps = prompts[:1], "2" // the call and the request that reads its result
	}
	for _, p := range prompts {
		r.turn("wire", ws, p, "--max-steps", steps)
	}
	ex := r.proxy.Exchanges()
	r.checkExchanges("wire", prompts, ex)
	calls, chats := 0, 0
	for _, e := range ex {
		if e.Chat() {
			chats++
			calls += len(e.Calls)
		}
	}
	t.Logf("%d chat requests, %d tool calls by the model", chats, calls)
	if calls == 0 {
		t.Error("the model made no tool call: the tool-call wire was not exercised")
	}
	rows := cacheRows(r, "wire", ex)
	checkReuse(t, rows)
	writeOut(t, "wire.md", realmodel.CacheTable(rows))
}

// TestFaults breaks three of the model's real tool calls on their way to
// Tally, each in the first answer of a session of its own (where the
// model copies the call it is shown): an unknown tool, arguments that are
// not JSON, arguments left out. Each must become an error result the
// model reads, with the wire and the store agreeing as in TestWire.
func TestFaults(t *testing.T) {
	if short() {
		t.Skip("not part of the short form")
	}
	r := newRig(t, "faults", realmodel.ServerOptions{Template: env.template})
	ws := r.workspace("ws", wireFiles)
	faults := []realmodel.Fault{realmodel.FaultUnknownTool, realmodel.FaultBadJSON, realmodel.FaultNoArguments}
	prompt := "Read app.py. Reply with exactly:\n" + call("read_file", `{"path": "app.py"}`)
	var report strings.Builder
	report.WriteString("| session | fault put in the model's tool call | what Tally stored as the result |\n|---|---|---|\n")
	for i, f := range faults {
		session := fmt.Sprintf("fault-%d", i+1)
		n0 := len(r.proxy.Exchanges())
		r.proxy.Break(f)
		r.turn(session, ws, prompt, "--max-steps", "2")
		ex := r.proxy.Since(n0)
		r.checkExchanges(session, []string{prompt}, ex)
		lines, err := r.tally.Export(context.Background(), session)
		if err != nil {
			t.Fatal(err)
		}
		broken := false
		for _, e := range ex {
			if e.Fault == "" || len(e.Calls) == 0 {
				continue
			}
			broken = true
			id := e.Calls[0].ID
			result, isErr := "", false
			for _, l := range lines {
				if l.Message.Role == "tool" && l.Message.ToolCallID == id {
					result, isErr = l.Text(), l.Message.IsError
				}
			}
			fmt.Fprintf(&report, "| %s | %s (%s) | %s |\n", session, e.Fault, e.Calls[0].Name, strings.ReplaceAll(clip(result), "|", "\\|"))
			if !isErr {
				t.Errorf("%s: the call with %s got a result that is not an error: %q", session, e.Fault, result)
			}
		}
		if !broken {
			t.Errorf("%s: the model made no tool call to break with %s", session, f)
		}
	}
	writeOut(t, "faults.md", report.String())
	if n := r.proxy.Pending(); n > 0 {
		t.Errorf("%d of %d faults found no tool call to break", n, len(faults))
	}
}

// cacheRows lines the chat exchanges up with the session's ledger rows
// (one row per request, in order).
func cacheRows(r *rig, session string, ex []realmodel.Exchange) []realmodel.CacheRow {
	r.t.Helper()
	l, err := r.tally.Ledger(context.Background(), session)
	if err != nil {
		r.t.Fatal(err)
	}
	var rows []realmodel.CacheRow
	var prev []byte
	for _, e := range ex {
		if !e.Chat() {
			continue
		}
		row := realmodel.CacheRow{Exchange: e, Label: "turn"}
		msgs, _ := realmodel.Messages(e.Request)
		row.Messages = len(msgs)
		if prev != nil {
			pm, _ := realmodel.Messages(prev)
			row.Prev = len(pm)
			row.Shared = realmodel.SharedMessages(prev, e.Request)
		}
		if i := len(rows); i < len(l.Rows) {
			lr := l.Rows[i]
			row.Row = &lr
			if lr.Kind != "" {
				row.Label = string(lr.Kind)
			}
		}
		rows = append(rows, row)
		prev = e.Request
	}
	return rows
}

// reuseSlack is how many prompt tokens past the new ones llama-server may
// evaluate for a request that extends the one before: the tail of the
// previous reply, which the template renders back from the stored
// message, not from the tokens the model generated.
const reuseSlack = 96

// checkReuse checks that each request extending the one before it had
// only its new tokens evaluated: what llama-server evaluated (prompt_n)
// is at most what was added since the previous request plus reuseSlack.
func checkReuse(t *testing.T, rows []realmodel.CacheRow) {
	t.Helper()
	checked := 0
	for i := 1; i < len(rows); i++ {
		cur, prev := rows[i], rows[i-1]
		if cur.Shared < cur.Prev || cur.Timings == nil || prev.Usage == nil || cur.Usage == nil {
			continue // a rewrite, or nothing to compare
		}
		added := cur.Usage.PromptTokens - prev.Usage.PromptTokens
		checked++
		if cur.Timings.PromptN > added+reuseSlack {
			t.Errorf("request %d extends request %d by %d tokens but llama-server evaluated %d of its %d (cache_n %d)",
				i+1, i, added, cur.Timings.PromptN, cur.Usage.PromptTokens, cur.Timings.CacheN)
		}
	}
	if checked == 0 {
		t.Error("no request extended the one before it")
	}
}
