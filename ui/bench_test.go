package ui

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// seedLongSession stores a session of n messages: user prompts, Markdown
// answers with tool calls, and tool results.
func seedLongSession(tb testing.TB, dir string, n int) string {
	tb.Helper()
	st, err := storage.Open(filepath.Join(dir, "tally.db"), storage.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	sess, err := agent.Create(agent.Config{Store: st, ModelName: "bench-model"}, "bench", dir, "bench")
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now()
	var data [][]byte
	for i := 0; len(data) < n; i++ {
		call := transcript.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read_file", Arguments: fmt.Sprintf(`{"path":"pkg/file%d.go"}`, i)}
		for _, m := range []transcript.Message{
			transcript.UserText("<turn_meta>\n</turn_meta>", fmt.Sprintf("Step %d: look at file%d.go and explain what it does.", i, i), now),
			transcript.AssistantReply("Reading it.", "I should read the file.", []transcript.ToolCall{call}, now),
			transcript.ToolResult(call, fmt.Sprintf("package pkg\n\n// F%d does things.\nfunc F%d() int { return %d }\n", i, i, i), false, now),
			transcript.AssistantReply(fmt.Sprintf("## file%d.go\n\nIt defines **F%d**, which returns `%d`.\n\n- short\n- simple", i, i, i), "", nil, now),
		} {
			b, err := transcript.Encode(m)
			if err != nil {
				tb.Fatal(err)
			}
			data = append(data, b)
		}
	}
	if err := st.Update(func(tx *storage.Tx) error {
		for _, b := range data[:n] {
			if _, err := tx.Append(sess.ID(), 1, b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return sess.ID()
}

// BenchmarkOpenSession10k measures opening a 10,000-message session until
// its first frame is laid out: loading it from the store, building the chat
// rows, measuring every row and rendering the visible ones.
//
//	go test -run '^$' -bench 'Session10k' -benchtime 3x ./ui/
func BenchmarkOpenSession10k(b *testing.B) {
	dir := b.TempDir()
	id := seedLongSession(b, dir, 10_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		a := test.NewTempApp(b)
		w := test.NewTempWindow(b, widget.NewLabel(""))
		w.Resize(fyne.NewSize(1280, 800))
		q := &queue{}
		u := New(a, w, newBridgeWith(q.post), Options{DataDir: dir, Env: func(string) string { return "" }})
		q.drain()
		b.StartTimer()
		u.openSession(id)
		for u.live == nil || u.live.sess == nil {
			q.drain()
			time.Sleep(100 * time.Microsecond)
		}
		q.drain()
		w.Canvas().Content().Refresh()
		b.StopTimer()
		if len(u.chat.items) < 10_000 {
			b.Fatalf("only %d rows", len(u.chat.items))
		}
		u.Close()
		b.StartTimer()
	}
}

// BenchmarkScrollSession10k measures one scroll step (a page) through the
// 10,000-message chat, including laying out the rows that come into view.
//
//	go test -run '^$' -bench 'Session10k' ./ui/
func BenchmarkScrollSession10k(b *testing.B) {
	dir := b.TempDir()
	id := seedLongSession(b, dir, 10_000)
	a := test.NewTempApp(b)
	w := test.NewTempWindow(b, widget.NewLabel(""))
	w.Resize(fyne.NewSize(1280, 800))
	q := &queue{}
	u := New(a, w, newBridgeWith(q.post), Options{DataDir: dir, Env: func(string) string { return "" }})
	defer u.Close()
	u.openSession(id)
	for u.live == nil || u.live.sess == nil {
		q.drain()
		time.Sleep(time.Millisecond)
	}
	q.drain()
	total := float32(0)
	for _, h := range u.chat.heights {
		total += h
	}
	page := u.chat.list.Size().Height
	b.ResetTimer()
	off := float32(0)
	for i := 0; i < b.N; i++ {
		off += page
		if off > total {
			off = 0
		}
		u.chat.list.ScrollToOffset(off)
		q.drain() // exact measurement of the rows that came into view
	}
}
