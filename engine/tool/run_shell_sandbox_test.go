//go:build unix

package tool

import (
	"slices"
	"strings"
	"testing"

	"github.com/tally-dev/tally/internal/sandbox"
)

// TestRunShellHidesSecrets is the regression test for commands that could
// print the API key from the environment.
func TestRunShellHidesSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-openai-1234")
	t.Setenv("MY_SECRET_TOKEN", "tok-test-5678")
	t.Setenv("TALLY_TEST_VISIBLE", "visible-value")
	_, env := newWorkspace(t, nil)
	env.ShellEnv = []string{"TALLY_TEST_VISIBLE", "MY_SECRET_TOKEN"}
	for _, command := range []string{"env", "echo \"key=$OPENAI_API_KEY token=$MY_SECRET_TOKEN\"", "cat /proc/self/environ | tr '\\0' '\\n'"} {
		res := call(t, RunShell(), env, map[string]any{"command": command})
		for _, secret := range []string{"sk-test-openai-1234", "tok-test-5678"} {
			if strings.Contains(res.Content, secret) {
				t.Errorf("%s: the output shows %q:\n%s", command, secret, res.Content)
			}
		}
		if command == "env" {
			mustContain(t, res.Content, "TALLY_TEST_VISIBLE=visible-value", "TERM=dumb", "PATH=")
		}
	}
}

func TestShellEnviron(t *testing.T) {
	base := []string{"PATH=/bin", "TERM=xterm-256color", "TMPDIR=/tmp", "OPENAI_API_KEY=sk-x", "FOO=1", "BAR_PASSWORD=p"}
	got := ShellEnviron(&Env{TempDir: "/work/tmp/s1", ShellEnv: []string{"FOO", "BAR_PASSWORD"}}, base)
	want := []string{"PATH=/bin", "TMPDIR=/work/tmp/s1", "FOO=1", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "TERM=dumb", "NO_COLOR=1"}
	if !slices.Equal(got, want) {
		t.Errorf("ShellEnviron =\n%q\nwant\n%q", got, want)
	}
	if got := ShellEnviron(nil, []string{"TMPDIR=/tmp"}); !slices.Contains(got, "TMPDIR=/tmp") {
		t.Errorf("without a session temp dir TMPDIR should pass: %q", got)
	}
}

func TestShellSandboxNote(t *testing.T) {
	ok, why := sandbox.Available()
	env := &Env{TempDir: "/t", CacheDirs: []string{"/c"}}
	got := ShellSandboxNote(env)
	switch {
	case !ok:
		if got != "not sandboxed: "+why {
			t.Errorf("got %q", got)
		}
	case sandbox.BlocksNetwork():
		if got != "sandboxed: writes only in the workspace, temp dir and build caches; network blocked" {
			t.Errorf("got %q", got)
		}
	}
	if ok {
		env.AllowNetwork = true
		if got := ShellSandboxNote(env); !strings.HasSuffix(got, "; network allowed") {
			t.Errorf("got %q", got)
		}
		if got := ShellSandboxNote(&Env{}); !strings.HasPrefix(got, "sandboxed: writes only in the workspace; ") {
			t.Errorf("got %q", got)
		}
	}
}

func TestSandboxNote(t *testing.T) {
	p := sandbox.Policy{Workspace: "/ws", Writable: []string{"/tmp/s1", "/home/u/.cache/go-build"}}
	cases := []struct {
		name   string
		run    shellRun
		output string
		want   string
	}{
		{"unsandboxed", shellRun{why: "no Landlock"}, "", "note: not sandboxed (no Landlock)"},
		{"success", shellRun{sandboxed: true}, "touch: cannot touch '/etc/x': Permission denied\n", ""},
		{"bash redirect", shellRun{sandboxed: true, code: 1}, "bash: line 1: /home/u/x: Permission denied\n", blockedFileNote},
		{"coreutils quotes", shellRun{sandboxed: true, code: 1}, "mkdir: cannot create directory ‘../x’: Permission denied\n", blockedFileNote},
		{"python", shellRun{sandboxed: true, code: 1}, "PermissionError: [Errno 13] Permission denied: '/tmp/x'\n", blockedFileNote},
		{"inside workspace", shellRun{sandboxed: true, code: 1}, "open /ws/ro.txt: permission denied\n", ""},
		{"inside temp dir", shellRun{sandboxed: true, code: 1}, "open /tmp/s1/a: permission denied\n", ""},
		{"relative inside", shellRun{sandboxed: true, code: 1}, "cp: cannot create regular file './a/b': Permission denied\n", ""},
		{"no denial", shellRun{sandboxed: true, code: 1}, "open /etc/x: no such file or directory\n", ""},
		{"unix socket", shellRun{sandboxed: true, code: 1}, "dial unix /var/run/docker.sock: socket: permission denied\n", blockedUnixNote},
		{"x server", shellRun{sandboxed: true, code: 1}, "Error: Can't open display: :0 (Permission denied)\n", blockedUnixNote},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.run.sandboxNote(tc.output, p); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if sandbox.IsolatesNetwork() {
		got := shellRun{sandboxed: true, code: 6}.sandboxNote("curl: (6) Could not resolve host: example.com\n", p)
		if got != blockedNetNote {
			t.Errorf("name resolution: got %q", got)
		}
	}
	if sandbox.BlocksNetwork() {
		got := shellRun{sandboxed: true, code: 1}.sandboxNote("bash: connect: Permission denied\nbash: line 1: /dev/tcp/127.0.0.1/80: Permission denied\n", p)
		if got != blockedNetNote {
			t.Errorf("network: got %q", got)
		}
	}
}
