package tool

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tally-dev/tally/internal/ownpaths"
	"github.com/tally-dev/tally/internal/sandbox"
	"github.com/tally-dev/tally/internal/text"
)

// shellFixedEnv are set for every command, replacing inherited values, so
// that tools do not page, prompt or colour their output.
var shellFixedEnv = []string{"PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "TERM=dumb", "NO_COLOR=1"}

// ShellEnviron returns the environment run_shell gives commands, built from
// base (normally os.Environ()): the allow-list of [sandbox.Environ] plus
// the names in env.ShellEnv (names that look like secrets never pass), then
// TMPDIR set to env.TempDir when that is set, the workspace's private build
// caches (see [sandbox.PrivateCaches]) where the sandbox applies, and
// PAGER=cat, GIT_PAGER=cat, GIT_TERMINAL_PROMPT=0, TERM=dumb and
// NO_COLOR=1, with PATH's empty, relative and workspace folders left out.
// The app may show it.
func ShellEnviron(env *Env, base []string) []string {
	out, _ := shellEnvironment(env, base)
	return out
}

// shellEnvironment is ShellEnviron that also returns the private build
// caches it points the command at (none where commands are not
// sandboxed), computed once for the environment and the policy.
func shellEnvironment(env *Env, base []string) ([]string, sandbox.Caches) {
	fixed := shellFixedEnv
	out := sandbox.Environ(base, nil)
	var caches sandbox.Caches
	if env != nil {
		out = sandbox.Environ(base, env.ShellEnv)
		var pre []string
		if env.TempDir != "" {
			pre = append(pre, "TMPDIR="+env.TempDir)
		}
		caches = shellCaches(env, out)
		fixed = append(append(pre, caches.Env...), fixed...)
	}
	for _, kv := range fixed {
		name, _, _ := strings.Cut(kv, "=")
		out = setEnvVar(out, name, kv)
	}
	if env != nil {
		// A program of the repository never stands in for one the user
		// installed: PATH keeps only absolute folders outside the
		// workspace (a venv inside it is called by its path).
		out = sandbox.ConfineSearchPaths(out, []string{"PATH"}, env.Workspace)
	}
	return out, caches
}

// setEnvVar replaces the entry for name in list by kv, or appends kv.
func setEnvVar(list []string, name, kv string) []string {
	for i, e := range list {
		if strings.HasPrefix(e, name+"=") {
			list[i] = kv
			return list
		}
	}
	return append(list, kv)
}

// ShellSandboxNote describes in one line what commands run by run_shell
// may do under env, for the approval card and the status footer, such as
// "sandboxed: writes only in the workspace, temp dir and build caches;
// network blocked", or "not sandboxed: <why>" (or "commands refused: ..."
// when env.RequireSandbox is set and the sandbox is unavailable).
func ShellSandboxNote(env *Env) string {
	if env == nil {
		env = &Env{}
	}
	ok, why := sandbox.Available()
	if !ok {
		if env.RequireSandbox {
			return "commands refused: the sandbox is required but unavailable (" + why + ")"
		}
		return "not sandboxed: " + why
	}
	places := []string{"the workspace"}
	if len(env.Roots) > 0 {
		places = append(places, text.Plural(len(env.Roots), "additional folder"))
	}
	if env.TempDir != "" {
		places = append(places, "temp dir")
	}
	if len(env.CacheDirs) > 0 {
		places = append(places, "build caches")
	}
	where := places[0]
	if len(places) > 1 {
		where = strings.Join(places[:len(places)-1], ", ") + " and " + places[len(places)-1]
	}
	network := "network blocked"
	switch {
	case env.AllowNetwork:
		network = "network allowed"
	case !sandbox.BlocksNetwork():
		network = "network not blocked (the kernel is too old)"
	case !sandbox.IsolatesNetwork():
		network = "TCP blocked, UDP not (this kernel allows no user namespaces)"
	}
	return "sandboxed: writes only in " + where + "; " + network
}

// shellPolicy is the sandbox policy of a command run in workspace ws with
// the private build caches caches (from shellEnvironment).
func shellPolicy(env *Env, ws string, caches sandbox.Caches) sandbox.Policy {
	// Tally's own files (configuration, credentials, every data folder it
	// knows, caches and logs) are hidden whoever asks: a session's own
	// data folder is only one of them.
	p := sandbox.Policy{
		Workspace: ws, AllowNetwork: env.AllowNetwork, Require: env.RequireSandbox,
		Hidden: ownpaths.Hidden(env.Private...), Readable: ownpaths.Readable(),
	}
	for _, r := range env.Roots {
		if fi, err := os.Stat(r); err == nil && fi.IsDir() { // a folder deleted since is not made again
			p.Writable = append(p.Writable, r)
		}
	}
	if env.TempDir != "" {
		p.Writable = append(p.Writable, env.TempDir)
	}
	p.Writable = append(p.Writable, caches.Writable...)
	p.Writable = append(p.Writable, env.CacheDirs...)
	return p
}

// shellCaches returns the private build caches of env's workspace for a
// command whose environment is cmdEnv; none where commands are not
// sandboxed (they then use the user's own caches, as outside Tally) or the
// caches cannot be created.
func shellCaches(env *Env, cmdEnv []string) sandbox.Caches {
	if ok, _ := sandbox.Available(); !ok || env.Workspace == "" {
		return sandbox.Caches{}
	}
	c, err := sandbox.PrivateCaches(env.CacheRoot, env.Workspace, cmdEnv, env.AllowNetwork)
	if err != nil {
		return sandbox.Caches{}
	}
	return c
}

// Notes appended to a run_shell result.
const (
	notSandboxedNote = "note: not sandboxed (%s)"
	blockedFileNote  = "note: the sandbox blocks writes outside the workspace (allowed: workspace, session temp dir, build caches) and reads outside system, toolchain and home directories"
	blockedNetNote   = "note: the sandbox blocks network access; the user can allow it in the settings"
	blockedUnixNote  = "note: the sandbox blocks Unix sockets (the X server, the session bus, Docker, other programs' sockets); no setting allows them"
)

// sandboxNote returns the note to append about the sandbox: that the
// command ran without it, or, when it failed with "permission denied" on a
// path outside the writable places or on a connection, that the sandbox
// blocked it.
func (r shellRun) sandboxNote(output string, p sandbox.Policy) string {
	if !r.sandboxed {
		return strings.Replace(notSandboxedNote, "%s", r.why, 1)
	}
	if r.code == 0 {
		return ""
	}
	var notes []string
	note := func(n string) {
		if !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	for line := range strings.Lines(output) {
		low := strings.ToLower(line)
		if !p.AllowNetwork && sandbox.IsolatesNetwork() && unreachable(low) {
			note(blockedNetNote)
		}
		if !strings.Contains(low, "permission denied") && !strings.Contains(low, "eacces") {
			continue
		}
		if mentionsUnixSocket(low) {
			note(blockedUnixNote)
			continue
		}
		if !p.AllowNetwork && sandbox.BlocksNetwork() && mentionsNetwork(low) && !slices.Contains(notes, blockedNetNote) {
			notes = append(notes, blockedNetNote)
		}
		if deniedOutside(line, p) && !slices.Contains(notes, blockedFileNote) {
			notes = append(notes, blockedFileNote)
		}
	}
	return strings.Join(notes, "\n")
}

// unreachable reports whether a lower-cased error line says that a host
// or network could not be reached or named, as inside a network namespace
// of the command's own.
func unreachable(low string) bool {
	for _, w := range []string{"network is unreachable", "temporary failure in name resolution", "could not resolve host", "name or service not known", "no such host"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// mentionsUnixSocket reports whether a lower-cased error line is about a
// Unix socket or a service reached through one.
func mentionsUnixSocket(low string) bool {
	for _, w := range []string{"unix", ".sock", "x11", "display", "dbus", "docker daemon"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// mentionsNetwork reports whether a lower-cased error line is about a
// network operation.
func mentionsNetwork(low string) bool {
	for _, w := range []string{"connect", "bind", "socket", "dial", "/dev/tcp/", "/dev/udp/", "network"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// deniedOutside reports whether an error line names a path outside the
// policy's writable places.
func deniedOutside(line string, p sandbox.Policy) bool {
	for _, tok := range strings.Fields(line) {
		tok = strings.Trim(tok, "'\"`‘’“”:,;()[]")
		switch {
		case strings.HasPrefix(tok, "/dev/tcp/"), strings.HasPrefix(tok, "/dev/udp/"):
			continue
		case strings.HasPrefix(tok, "/"):
		case strings.HasPrefix(tok, "./"), strings.HasPrefix(tok, "../"):
			tok = filepath.Join(p.Workspace, tok)
		default:
			continue
		}
		inside := false
		for _, root := range append([]string{p.Workspace}, p.Writable...) {
			if root != "" && underRoot(root, filepath.Clean(tok)) {
				inside = true
				break
			}
		}
		if !inside {
			return true
		}
	}
	return false
}

// underRoot reports whether path is root or below it.
func underRoot(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ConfineProgram returns cmd wrapped to run in the sandbox commands of env
// run in (the same policy, private build caches and TMPDIR as run_shell),
// for a long-running program of the workspace such as its MCP server or a
// language server; readable adds folders it may read besides the system,
// toolchain and home ones (a language server's install folder). cmd's
// environment is kept, with the caches and TMPDIR set on top. Where
// the sandbox is unavailable it returns cmd itself, unless env requires
// the sandbox.
func ConfineProgram(env *Env, cmd *exec.Cmd, readable ...string) (*exec.Cmd, error) {
	cmdEnv := cmd.Env
	if env.TempDir != "" {
		cmdEnv = setEnvVar(slices.Clone(cmdEnv), "TMPDIR", "TMPDIR="+env.TempDir)
	}
	caches := shellCaches(env, cmdEnv)
	for _, kv := range caches.Env {
		name, _, _ := strings.Cut(kv, "=")
		cmdEnv = setEnvVar(cmdEnv, name, kv)
	}
	cmd.Env = cmdEnv
	p := shellPolicy(env, env.Workspace, caches)
	p.Readable = append(p.Readable, readable...)
	return sandbox.Wrap(cmd, p)
}
