package ui

import (
	"runtime/debug"
	"time"

	"github.com/tally-dev/tally/internal/fynecache"
)

// Handing memory back. Scrolling through a long session allocates far
// more than the chat keeps, in two places: Go's heap (rows filled and
// dropped, Markdown parsed) and the C heap, where the renderer keeps a
// texture for every run of text drawn lately (Fyne frees a text's
// texture when it has not been drawn for its cache duration, 15 s in the
// app, at the next frame). Neither allocator soon returns freed memory to
// the system on its own, so the process would hold on to the peak of its
// last scroll.

// settleRelease is how long the chat shows no new row before memory is
// handed back.
const settleRelease = 2 * time.Second

// textureLife is how long the renderer keeps a text's texture after it
// was last drawn (Fyne's cache duration, see internal/fynecache), with a
// margin; by then the textures of the rows scrolled past can go.
func textureLife() time.Duration { return fynecache.Duration() + 5*time.Second }

// memoryReleaser returns what the chat calls when a row comes into view:
// once it has shown no new row for soon (settleRelease), release
// (releaseMemory) hands back the memory the rows it dropped held, off the
// UI goroutine; once late (textureLife) has passed too, the window is
// drawn again so the renderer frees the textures nothing drew since, and
// release runs again soon after.
//
// It is called for every row a scroll shows, on the UI goroutine, so it
// only moves two timers made once.
func (u *UI) memoryReleaser(soon, late time.Duration, release func() func()) func() {
	var first, second *time.Timer
	return func() {
		if first != nil {
			first.Reset(soon)
			second.Reset(late)
			return
		}
		first = u.bridge.After(soon, func() { u.bridge.Work(release) })
		second = u.bridge.After(late, func() {
			u.win.Canvas().Refresh(u.chat.List) // the next frame frees the expired textures
			u.bridge.After(soon, func() { u.bridge.Work(release) })
		})
	}
}

// releaseMemory returns to the system the memory Go's collector and the C
// allocator have freed, off the UI goroutine. Reading a long session from
// the store allocates several times what it keeps; without this the
// process would hold on to that peak for minutes.
func releaseMemory() func() {
	debug.FreeOSMemory()
	trimCHeap()
	return nil
}
