package agent

// beginWork starts a turn-like operation (a turn, a compaction, a purge, a
// new cycle): it fails at once, reporting false, when another one runs;
// otherwise it takes the session lock, waiting only for the short reads and
// settings changes that hold it briefly, and end releases both.
//
// Deciding "busy" with a flag of its own, not with TryLock on the lock,
// keeps a brief reader (the app asking for the alerts, storing a mode
// switch) from making a turn started at that instant fail with ErrBusy.
func (s *Session) beginWork() (end func(), ok bool) {
	if !s.working.CompareAndSwap(false, true) {
		return nil, false
	}
	s.mu.Lock()
	return func() {
		s.mu.Unlock()
		s.working.Store(false)
	}, true
}
