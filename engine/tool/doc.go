// Package tool defines the tools a coding agent can call and the machinery
// around them: the model-facing catalog, argument decoding, workspace
// confinement, output truncation and the approval gate.
//
// Every tool works inside one workspace directory. Paths given by the model
// go through [Confine], which refuses anything that would reach outside the
// workspace, including through symlinks. Paths reported back to the model are
// workspace-relative and slash-separated on every platform.
//
// Tools never panic on model input or file contents, and every failure is
// reported as a [Result] with IsError set and a one-sentence message saying
// what went wrong and what to do about it. [Registry.Run] additionally
// recovers from panics inside third-party tools and bounds the size of every
// result with [Truncate].
//
// The built-in tools are read_file, list_dir, grep, write_file, edit_file and
// run_shell; see [Builtins]. The last three change the workspace or run
// commands and report true from NeedsApproval, so callers are expected to
// consult an [Approver] (for example through a [Gate]) before running them.
package tool
