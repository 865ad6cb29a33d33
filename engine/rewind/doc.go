// Package rewind keeps what a session needs to go back: the user's
// numbered turns, each with the checklist and working set of its start,
// and the file checkpoints the tools record every change in. It plans a
// rewind to a turn (what restoring the files and rewinding the
// conversation would each do), restores the files, reverts single files
// and lists what changed. The conversation half of a rewind — taking the
// turn's message and what follows out of the log — is the session's own
// rebuild; this package says which messages and marks the turns.
//
// A Session's methods are called with the conversation's lock held,
// except those whose comment says they never wait.
package rewind
