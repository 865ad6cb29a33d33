// Package rewrite holds the sources that rewrite a session's conversation
// under token pressure or at the user's word — automatic, manual, idle and
// emergency compaction, the compaction notice and its "Not now", a new
// cycle with its hand-off brief and archive, the model-driven purge — and
// the price-aware level the context is kept under.
//
// None of them writes the log itself. Each builds a Request and hands it
// to the session's one rebuild (Host.Rebuild), which replaces the log,
// keeps what it removes and records the rewrite in one transaction. A
// Session is one conversation's share of these sources; the conversation
// lends it what it needs through the Host interface. Every method of a
// Session, unless its comment says otherwise, runs with the
// conversation's lock held, from a turn or a turn-like operation.
package rewrite
