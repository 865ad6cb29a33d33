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
// [Recorder.AfterShell], which compare two manifests of the workspace. A
// manifest honours .gitignore files (at every level; an ignored directory is
// not entered) as they were when the session first changed something —
// an ignore file written or deleted later, by the agent or anyone, does not
// change what the session's manifests see — and skips .git; only files whose stat changed since the
// previous manifest are read again. BeforeShell keeps the content of every
// listed file before the command runs — compressed, in memory, for as long
// as the process lives — and AfterShell stores only the earlier content of
// the files the command changed, once [Limits].Refuse allowed it: files that
// never change are never copied into the data file, and content Refuse
// declines (a credential) never reaches it. A process that dies while a
// command runs loses that command's before-images. Files larger than
// [Limits].FileBytes, and anything that is not a regular file or a symlink,
// are recorded as not restorable. Symlinks are recorded as links and never
// followed. No git command is ever run and git's state is never touched.
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
