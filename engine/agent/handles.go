package agent

import "slices"

// The session's features are reached through small handles, one per
// concern, so that Session itself keeps only what every caller needs
// (run a turn, read the conversation, its numbers and its prompt). A
// handle is a value that refers to its session; it may be kept and
// copied, and each of its methods keeps the locking rule its doc states.

// Permissions is the session's permission mode, its "always allow" rules
// and its network switch for commands.
type Permissions struct{ s *Session }

// Permissions returns the session's permission handle.
func (s *Session) Permissions() Permissions { return Permissions{s} }

// Files is what the session's turns did to the workspace's files: the
// changes since a turn, and reverting them.
type Files struct{ s *Session }

// Files returns the session's file-changes handle.
func (s *Session) Files() Files { return Files{s} }

// Roots returns the session's additional folders (see Config.Roots);
// they are fixed while it is open.
func (h Files) Roots() []string { return slices.Clone(h.s.st.Roots) }

// MCP is the session's MCP servers: their state and connecting one.
type MCP struct{ s *Session }

// MCP returns the session's MCP handle.
func (s *Session) MCP() MCP { return MCP{s} }

// Compaction is the session's compaction: its preview, applying it,
// postponing the automatic one, the rewrites so far and the budget
// forecast.
type Compaction struct{ s *Session }

// Compaction returns the session's compaction handle.
func (s *Session) Compaction() Compaction { return Compaction{s} }

// Purge is the model-driven purge: a preview the model proposes and
// applying it.
type Purge struct{ s *Session }

// Purge returns the session's purge handle.
func (s *Session) Purge() Purge { return Purge{s} }

// Audit is what the model was sent and will be sent: the next request
// and its status block, the ledger of every request, and the checks of
// the status blocks and engine tags already sent.
type Audit struct{ s *Session }

// Audit returns the session's audit handle.
func (s *Session) Audit() Audit { return Audit{s} }

// Images is the pictures of the session's messages: checking pictures
// before they are sent, and reading stored ones back.
type Images struct{ s *Session }

// Images returns the session's images handle.
func (s *Session) Images() Images { return Images{s} }

// Rewind is going back to the start of one of the user's turns: its dry
// run and applying it to the files, the conversation or both.
type Rewind struct{ s *Session }

// Rewind returns the session's rewind handle.
func (s *Session) Rewind() Rewind { return Rewind{s} }
