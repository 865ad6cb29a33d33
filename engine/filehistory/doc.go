// Package filehistory records the workspace files a session changes, so that
// every change can be reviewed and undone, with or without git.
//
// A [Workspace] holds the checkpoints of all sessions working in one
// directory, kept in the storage.Store under a namespace derived from the
// directory's absolute path ([WorkspaceID]). File content is stored once per
// SHA-256, compressed with zstd, in a section that, unlike storage blobs, can
// be pruned: when the total passes [Limits].StoreBytes, content nothing needs
// is dropped first, then the oldest turns of closed sessions, then of open
// ones; the turns that lost their content are reported by
// [Workspace.Unrestorable]. Every record is persisted before a method returns,
// so a new process (the CLI after the app closed) sees the same checkpoints.
//
// A session's [Recorder] records, per user turn ([Recorder.BeginTurn]), the
// before-image of every path the session changes: for write_file and
// edit_file through [Recorder.BeforeWrite] (and [Recorder.AfterWrite] for the
// state it left), for shell commands through [Recorder.BeforeShell] and
// [Recorder.AfterShell]. A manifest of the workspace honours .gitignore
// files (at every level; an ignored directory is not entered) as they were
// when the session first changed something — an ignore file written or
// deleted later, by the agent or anyone, does not change what the session's
// manifests see — and skips .git.
//
// The first shell snapshot of a process walks the workspace and stats every
// file; [Recorder.Prepare] takes it ahead of time (a host calls it when a
// turn starts), so that the first command pays only for what changed
// since. A file is read and hashed only when its stat changed
// since the last snapshot, and, where the workspace is in a git repository,
// only when git's index does not vouch for it: a tracked file whose stat
// matches its index entry exactly (and that is not "racily clean", modified
// no earlier than the index was written) is recorded as that entry's blob,
// unread. Its content is read from the repository's object store (loose or
// packed) only if a command changes the file, in AfterShell, and stored then
// as ordinary content, so that restoring never needs git; if the object is
// gone by then, the file is recorded as not restorable, saying so. The index
// is not trusted at all when the repository uses something that could make
// a blob differ from its file or that this reader does not handle
// (attributes files, line-ending conversion, a split or sparse index,
// SHA-256 objects, a partial clone): every file is read then. No git command
// is ever run and nothing under .git is written.
//
// After the first snapshot, on Linux, every directory the manifest lists is
// watched with inotify, and a snapshot only looks at the paths named by the
// events queued since the last one (walking new directories, dropping
// removed ones). The kernel queues an event before the system call that
// caused it returns, so once a command has exited, reading the queue until
// it is empty gives every change the command made through the workspace's
// directories. When events were lost (the queue overflowed), the watch
// limit was reached, more workspaces are watched than a process allows, no
// recorder of the workspace is open, or on other systems, a snapshot walks
// the whole workspace as the first one did, comparing stats. Hard-linked
// files, which can change through a name outside the watched directories,
// are stat-ed at every snapshot. What watching cannot see: writes through a
// memory mapping whose file was closed before the writes, and changes made
// on another machine to a network file system.
//
// The content a snapshot read that is not stored yet is kept (compressed
// from 4 KB up) in a temporary file beside the data file (unlinked at once
// where the system allows), for as long as the process lives; memory holds
// only the manifest and an index of the staged content, under 300 bytes a
// file. AfterShell stores only the earlier content of the files the command
// changed, once [Limits].Refuse allowed it: files that never change are
// never copied into the data file, and content Refuse declines (a
// credential) never reaches it. A process that dies while a command runs
// loses that command's before-images. Files larger than [Limits].FileBytes,
// and anything that is not a regular file or a symlink, are recorded as not
// restorable. Symlinks are recorded as links and never followed.
//
// The checkpoint of turn T is the state, at the start of T, of the files the
// session changed from T on. [Workspace.Plan] lists what restoring it would
// do per file, with diffs and a conflict flag for files changed outside
// Tally since the session last wrote them; [Workspace.Restore] carries a
// plan out through an os.Root confined to the workspace, writes nothing when
// a file conflicts unless forced, and never writes a file the session did
// not touch. [Workspace.Changes] and [Workspace.RevertFile] serve a review of
// everything a session changed.
//
// Nothing in the package panics on file contents or odd files (FIFOs,
// sockets, unreadable files, dangling links); every error is one sentence
// saying what went wrong and what to do.
package filehistory
