// Package gitsafe is the one list of git settings that stop a
// repository's own files from making git run a program: an fsmonitor,
// hooks (post-commit runs despite --no-verify), an external diff, a
// signing program, an ssh command. Tally's own git takes them as -c
// options ([Flags]); a command an allow rule let run without asking takes
// them through git's GIT_CONFIG_* variables ([Env]), so that `git status`
// allowed by a rule runs no fsmonitor the repository names.
package gitsafe

import (
	"fmt"
	"os"
)

// settings are the key and value of each switched-off setting.
var settings = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", os.DevNull},
	{"diff.external", ""},
	{"core.sshCommand", ""},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
}

// Flags returns the settings as git's -c options, to go before the
// subcommand.
func Flags() []string {
	out := make([]string, 0, 2*len(settings))
	for _, kv := range settings {
		out = append(out, "-c", kv[0]+"="+kv[1])
	}
	return out
}

// Env returns the settings as environment entries (GIT_CONFIG_COUNT,
// GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n, git 2.31 and newer), which every
// git a command starts reads as if given with -c.
func Env() []string {
	out := []string{fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(settings))}
	for i, kv := range settings {
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return out
}
