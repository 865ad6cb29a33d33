package ui

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent/longsession"
	"github.com/tally-dev/tally/ui/chat"
)

// seedLongSession stores a session of n messages (longsession.Seed) in
// the data directory dir.
func seedLongSession(tb testing.TB, dir string, n int) string {
	tb.Helper()
	// The workspace is a project folder beside the data directory, never
	// the data directory itself (the engine refuses that).
	id, err := longsession.Seed(dir, tb.TempDir(), n)
	if err != nil {
		tb.Fatal(err)
	}
	return id
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
		if len(u.chat.Items) < 10_000 {
			b.Fatalf("only %d rows", len(u.chat.Items))
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
	for _, h := range u.chat.List.Heights {
		total += h
	}
	page := u.chat.List.Size().Height
	b.ResetTimer()
	off := float32(0)
	for i := 0; i < b.N; i++ {
		off += page
		if off > total {
			off = 0
		}
		u.chat.List.ScrollToOffset(off)
		q.drain() // exact measurement of the rows that came into view
	}
}

// openLong opens a seeded 10,000-message session in a 1280×800 window and
// waits until it is shown.
func openLong(b *testing.B) (*UI, *queue, fyne.Window) {
	b.Helper()
	dir := b.TempDir()
	id := seedLongSession(b, dir, 10_000)
	// What seeding the store took is handed back, so the process's
	// resident set is the app's.
	debug.FreeOSMemory()
	a := test.NewTempApp(b)
	w := test.NewTempWindow(b, widget.NewLabel(""))
	w.Resize(fyne.NewSize(1280, 800))
	q := &queue{}
	u := New(a, w, newBridgeWith(q.post), Options{DataDir: dir, Env: func(string) string { return "" }})
	b.Cleanup(u.Close)
	u.openSession(id)
	for u.live == nil || u.live.sess == nil {
		q.drain()
		time.Sleep(time.Millisecond)
	}
	q.drain()
	if len(u.chat.Items) < 10_000 {
		b.Fatalf("only %d rows", len(u.chat.Items))
	}
	return u, q, w
}

// reportMemory reports the Go heap in use after a collection and the
// process's resident set (Linux only) as MB-heap-<when> and MB-rss-<when>.
func reportMemory(b *testing.B, when string) {
	b.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "MB-heap-"+when)
	if rss, ok := residentMB(); ok {
		b.ReportMetric(rss, "MB-rss-"+when)
	}
}

// residentMB reads the process's resident set size from /proc/self/status.
func residentMB() (float64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024, err == nil
		}
	}
	return 0, false
}

// BenchmarkMemorySession10k reports the memory the app holds with the
// 10,000-message session open, then after scrolling through all of it a
// page at a time from the top. Run it once per process:
//
//	go test -run '^$' -bench 'MemorySession10k' -benchtime 1x ./ui/
func BenchmarkMemorySession10k(b *testing.B) {
	for i := 0; i < b.N; i++ {
		u, q, _ := openLong(b)
		reportMemory(b, "open")
		page := u.chat.List.Size().Height
		u.chat.List.ScrollToOffset(0)
		q.drain()
		for off := float32(0); off < u.chat.Total(); off += page {
			u.chat.List.ScrollToOffset(off)
			q.drain()
		}
		reportMemory(b, "scrolled")
		runtime.KeepAlive(u)
	}
}

// wheelNotch is the distance the desktop driver reports for one notch of
// a mouse wheel (negative: down).
const wheelNotch = -chat.WheelStep

// BenchmarkWheelSession10k measures one wheel notch over the
// 10,000-message chat: the scroll event delivered where the mouse is, as
// the driver does, and the UI work it queues. The notches come in bursts
// of 20 spread over the whole session, top to bottom.
//
//	go test -run '^$' -bench 'WheelSession10k' -benchtime 2000x ./ui/
func BenchmarkWheelSession10k(b *testing.B) {
	u, q, w := openLong(b)
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(u.chat.List).
		Add(fyne.NewPos(u.chat.List.Size().Width/2, u.chat.List.Size().Height/2))
	const burst = 20
	bursts := max(b.N/burst, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%burst == 0 {
			b.StopTimer()
			u.chat.List.ScrollToOffset(u.chat.Total() * float32(i/burst) / float32(bursts))
			q.drain()
			b.StartTimer()
		}
		test.Scroll(w.Canvas(), pos, 0, wheelNotch)
		q.drain()
	}
}
