// Package proc runs commands in their own process group so that a timeout
// or a cancellation can kill everything a command started, not just the
// command itself. On systems without Unix process groups only the command's
// own process is killed.
//
// On Linux it also ties commands to the calling process (a command started
// with [StartInGroup] is killed when its parent dies) and offers the pieces
// a supervisor needs to kill a whole process tree, including processes that
// left the group with setsid: [SetChildSubreaper] and [Descendants].
package proc
