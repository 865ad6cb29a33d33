// Package hooks runs the user's command hooks at six points of a session —
// SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact and
// Stop — configured in the shape Claude Code's settings use:
//
//	{"hooks": {"PreToolUse": [{"matcher": "run_shell",
//	    "hooks": [{"type": "command", "command": "./check.sh", "timeout": 10}]}]}}
//
// read from the user's file ([UserPath], ~/.config/tally/hooks.json) and
// the workspace's .tally/hooks.json ([WorkspacePath]), which is used only
// when the user trusted its exact content and that of the workspace
// scripts its commands name ([LoadWorkspace], [TrustHash]). Before each
// call a workspace hook matches, a session checks that this content is
// unchanged: by the stamps of the paths the trust covered (see
// trust.Watch, which no command can forge), and by hashing it all again
// only when one of them changed.
//
// A hook gets the event as JSON on its standard input ([Input], with
// Claude Code's field names, so existing hook scripts work) and runs with
// bash -c in the workspace, under the sandbox and with the allow-listed
// environment of the session's commands ([Runner]), bounded by its timeout
// (60 s unless it says otherwise); its output is capped. Its answer
// ([Parse]) is exit status 2 to block (its stderr is the reason), exit 0
// with optional JSON on stdout to allow, deny or ask, add context or,
// before a tool call, change the arguments; any other status is an error
// shown to the user that blocks nothing. Hook output is data: it is never
// trusted as an engine tag, and callers neutralise it before it reaches
// the model. Nothing here panics on any file or any output.
package hooks
