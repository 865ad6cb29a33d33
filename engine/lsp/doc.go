// Package lsp runs language servers (gopls, pyright,
// typescript-language-server, rust-analyzer, clangd, or any configured
// in the user's lsp.json) for a workspace and gives the engine their
// diagnostics and navigation: definitions, references, hover and
// symbols, as Go values and as model-facing tools.
//
// One [Manager] serves a workspace, shared by reference count through
// [Acquire] across turns and sessions. A server starts lazily, when a
// file with one of its extensions is first synced or queried, and only
// when its command is found on the PATH of its environment (from which
// the workspace's own folders are removed) or in [SearchDirs]: Tally's
// folder of servers, which [Install] fills at the versions of
// versions.txt, and a checkout's .tools; the command is wrapped by
// Options.Confine, so it can run in the sandbox the session's commands
// run in. Its stderr and the messages it logs go to a capped log file
// per server. A server that crashes is restarted once; after a second
// crash, a hang or a refused handshake it stays failed, with a reason
// naming its log, for the manager's life.
//
// Files reach the servers through [Manager.Sync] as the files are on disk
// (didOpen, full-text didChange and didSave, didClose for a deleted
// file), written by one goroutine per server, so a caller never waits on
// a server's input. [Manager.Diagnostics] waits, bounded, for the
// servers to settle and returns a [Set] with 1-based, character-counted
// positions; [NewIn] tells what an edit added, and [Render] writes
// diagnostics for the model.
//
// Nothing a server sends can make Tally panic or wait past a bound:
// messages are size-capped and read leniently, requests are bounded by
// Options.RequestTimeout and cancelled when late, a server that stops
// reading its input is failed and killed, and every wait is bounded by
// Options.StartTimeout, RequestTimeout or Settle and by the caller's
// context. Paths given to the manager must be inside the workspace, and
// it reads only files inside it (through an os.Root), for syncs and for
// the excerpts of results.
package lsp
