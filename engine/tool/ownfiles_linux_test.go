package tool

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tally-dev/tally/internal/ownpaths"
)

// TestSandboxHidesTallysOwnFilesWhateverTheDataFolder is the regression
// test for commands that read Tally's own secrets: the MCP OAuth tokens
// and the keychain's fallback in the config folder, the static headers of
// the user's mcp.json, the default data folder of a session run with
// --data elsewhere, another data folder Tally opened once, and the logs in
// its cache folder. Run commands and confined programs (hooks, language
// servers, workspace MCP servers) are both checked; the user's skills and
// everything else in the home folder stay readable.
func TestSandboxHidesTallysOwnFilesWhateverTheDataFolder(t *testing.T) {
	requireSandbox(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "TALLY_DATA"} {
		t.Setenv(v, "")
	}
	files := map[string]string{
		".config/tally/credentials.json":   "OAUTH-REFRESH",
		".config/tally/mcp.json":           "BEARER-HEADER",
		".local/share/tally/tally.db":      "DEFAULT-STORE",
		"elsewhere/once/tally.db":          "REMEMBERED-STORE",
		"session-data/tally.db":            "SESSION-STORE",
		".cache/tally/lsp/gopls.log":       "LSP-LOG",
		".config/tally/skills/pdf/fill.sh": "SKILL-OK",
		".config/other/settings":           "OTHER-OK",
	}
	plantFiles(t, home, files)
	ownpaths.Remember(filepath.Join(home, "elsewhere/once"))
	_, env := sandboxEnv(t)
	env.Private = []string{filepath.Join(home, "session-data")}

	for name, body := range files {
		readable := strings.HasSuffix(body, "-OK")
		res := call(t, RunShell(), env, map[string]any{"command": "cat \"$HOME/" + name + "\""})
		if got := strings.Contains(res.Content, body); got != readable {
			t.Errorf("run_shell cat ~/%s: readable %v, want %v:\n%s", name, got, readable, res.Content)
		}
		cmd := exec.CommandContext(context.Background(), "cat", filepath.Join(home, name))
		cmd.Dir, cmd.Env = env.Workspace, os.Environ()
		w, err := ConfineProgram(env, cmd)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := w.CombinedOutput()
		if got := strings.Contains(string(out), body); got != readable {
			t.Errorf("a confined program's cat ~/%s: readable %v, want %v:\n%s", name, got, readable, out)
		}
	}
}

// TestSandboxHidesCredentialStoresByWhatLinksReach is the regression test
// for credential folders read by another name: ~/.ssh as a link into a
// dotfiles folder (the folder itself was readable), and ~/.aws through a
// second link to it. A link loop in the home folder must not hang the
// sandbox either.
func TestSandboxHidesCredentialStoresByWhatLinksReach(t *testing.T) {
	requireSandbox(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	plantFiles(t, home, map[string]string{"dotfiles/ssh/id_ed25519": "SSH-KEY", "dotfiles/vimrc": "VIMRC-OK", ".aws/credentials": "AWS-KEY"})
	for link, target := range map[string]string{".ssh": "dotfiles/ssh", "aws-backup": ".aws", "loop": "."} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	_, env := sandboxEnv(t)
	checkCatReadable(t, env, map[string]string{
		".ssh/id_ed25519": "SSH-KEY", "dotfiles/ssh/id_ed25519": "SSH-KEY", "loop/dotfiles/ssh/id_ed25519": "SSH-KEY",
		"aws-backup/credentials": "AWS-KEY", ".aws/credentials": "AWS-KEY", "loop/dotfiles/vimrc": "VIMRC-OK",
	})
}

// TestAWorkspaceProgramNeverStandsInForAnInstalledOne is the regression
// test for a workspace script named git that ran under the allow rule
// `git status` because PATH held "." (or a workspace folder).
func TestAWorkspaceProgramNeverStandsInForAnInstalledOne(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws, env := newWorkspace(t, map[string]string{"git": "#!/bin/sh\necho PLANTED\n", "bin/git": "#!/bin/sh\necho PLANTED\n"})
	os.Chmod(filepath.Join(ws, "git"), 0o755)
	os.Chmod(filepath.Join(ws, "bin", "git"), 0o755)
	t.Setenv("PATH", ".:"+filepath.Join(ws, "bin")+"::"+os.Getenv("PATH"))
	res := call(t, RunShell(), env, map[string]any{"command": "git --version"})
	if strings.Contains(res.Content, "PLANTED") || !strings.Contains(res.Content, "git version") {
		t.Errorf("git ran the workspace's script:\n%s", res.Content)
	}
	for _, kv := range ShellEnviron(env, os.Environ()) {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, e := range filepath.SplitList(v) {
				if e == "" || !filepath.IsAbs(e) || strings.HasPrefix(e, ws) {
					t.Errorf("PATH keeps %q", e)
				}
			}
		}
	}
}

// TestSandboxHidesTheCredentialFilesOfCommonTools is the regression test
// for the credential files of cargo, terraform and rclone, which the list
// by name missed.
func TestSandboxHidesTheCredentialFilesOfCommonTools(t *testing.T) {
	requireSandbox(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	files := map[string]string{
		".cargo/credentials.toml":            "CARGO-TOKEN",
		".terraform.d/credentials.tfrc.json": "TF-TOKEN",
		".config/rclone/rclone.conf":         "RCLONE-PASS",
		".cargo/config.toml":                 "CARGO-CONFIG-OK",
	}
	plantFiles(t, home, files)
	_, env := sandboxEnv(t)
	checkCatReadable(t, env, files)
}

// plantFiles writes files (path under root → body) with mode 0600.
func plantFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// checkCatReadable runs `cat "$HOME/name"` for each file and checks that
// exactly the bodies ending in -OK are readable.
func checkCatReadable(t *testing.T, env *Env, files map[string]string) {
	t.Helper()
	for name, body := range files {
		readable := strings.HasSuffix(body, "-OK")
		res := call(t, RunShell(), env, map[string]any{"command": "cat \"$HOME/" + name + "\""})
		if got := strings.Contains(res.Content, body); got != readable {
			t.Errorf("cat ~/%s: readable %v, want %v:\n%s", name, got, readable, res.Content)
		}
	}
}
