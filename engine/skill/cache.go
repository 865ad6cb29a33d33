package skill

import (
	"sync"

	"github.com/tally-dev/tally/internal/trust"
)

// maxCached bounds how many user and workspace folder pairs Discover
// remembers; past it they are all forgotten and read again when asked.
const maxCached = 16

// cached is one pair's last reading and the record of what it looked at.
type cached struct {
	w *trust.Watch
	f scanned
}

var cache struct {
	sync.Mutex
	m map[[2]string]cached
}

// found returns the skills of userDir and workspace as read from disk:
// the last reading while nothing it looked at has changed, otherwise a
// new one.
func found(userDir, workspace string) scanned {
	key := [2]string{userDir, workspace}
	cache.Lock()
	c, ok := cache.m[key]
	cache.Unlock()
	if ok && c.w.Unchanged() {
		return c.f
	}
	w := trust.NewWatch()
	f := scanAll(userDir, workspace, w)
	cache.Lock()
	if cache.m == nil || len(cache.m) >= maxCached {
		cache.m = map[[2]string]cached{}
	}
	cache.m[key] = cached{w, f}
	cache.Unlock()
	return f
}
