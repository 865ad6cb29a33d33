//go:build !linux

package filehistory

import "errors"

// watcher is not wired up on this system: every snapshot walks the
// workspace.
type watcher struct{}

const watchSupported = false

var errWatchLimit = errors.New("watching is not supported on this system")

func newWatcher() (*watcher, error) { return nil, errWatchLimit }

func (wt *watcher) add(abs, rel string) error      { return errWatchLimit }
func (wt *watcher) remove(rel string)              {}
func (wt *watcher) drain(fn func(rel string)) bool { return false }
func (wt *watcher) close()                         {}
func (wt *watcher) closeFD()                       {}
