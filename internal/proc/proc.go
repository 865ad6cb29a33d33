// Package proc runs commands in their own process group so that a timeout
// or a cancellation can kill everything a command started, not just the
// command itself. On systems without Unix process groups only the command's
// own process is killed.
package proc
