package lsp

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/tally-dev/tally/internal/ownpaths"
	"github.com/tally-dev/tally/internal/safefile"
	"github.com/tally-dev/tally/internal/sandbox"
)

// ServersFolder is the folder of Tally's data folder that [Install] puts
// language servers in.
const ServersFolder = "language-servers"

// module is the module path of Tally's own go.mod, which marks a
// checkout of its source.
const module = "github.com/tally-dev/tally"

// InstallDir returns the folder Tally installs language servers into:
// language-servers in its default data folder (TALLY_DATA, else
// ~/.local/share/tally on Linux), whichever data folder a session uses.
func InstallDir() (string, error) {
	dir, err := ownpaths.DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, ServersFolder), nil
}

// layoutDirs are the folders holding the programs of an installation
// root laid out as [Install] and scripts/deps.sh lay it out: bin for Go
// programs and npm/node_modules/.bin for npm's.
func layoutDirs(root string) []string {
	return []string{filepath.Join(root, "bin"), filepath.Join(root, "npm", "node_modules", ".bin")}
}

// SearchDirs returns the folders a server's program is looked for in
// after PATH: those of [InstallDir] and, when the running tally was built
// in a checkout of Tally's source, those of the checkout's .tools folder
// that scripts/deps.sh fills.
func SearchDirs() []string {
	var dirs []string
	if d, err := InstallDir(); err == nil {
		dirs = append(dirs, layoutDirs(d)...)
	}
	if t := ownCheckoutTools(); t != "" {
		dirs = append(dirs, layoutDirs(t)...)
	}
	return dirs
}

// ownCheckoutTools is checkoutTools of the running program, found once.
var ownCheckoutTools = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return checkoutTools(exe)
})

// checkoutTools returns the .tools folder of the checkout of Tally's
// source that holds the program exe (the folder of a go.mod of Tally's
// module, or one above it), "" when exe is not in one or it has no
// .tools. A program built elsewhere (go run, go test, an installed
// binary) finds none.
func checkoutTools(exe string) string {
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	for dir := filepath.Dir(exe); ; dir = filepath.Dir(dir) {
		if isTallyModule(filepath.Join(dir, "go.mod")) {
			tools := filepath.Join(dir, ".tools")
			if fi, err := os.Stat(tools); err == nil && fi.IsDir() {
				return tools
			}
			return ""
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// isTallyModule reports whether the go.mod at path declares Tally's module.
func isTallyModule(path string) bool {
	data, _, err := safefile.Read(path, 64<<10)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == module
		}
	}
	return false
}

// Find returns the program of sc as a session would find it: on the PATH
// of the environment servers get (sandbox.Environ of Tally's own, the
// workspace's folders aside), then in [SearchDirs]. When it is not
// found, prog is "" and why says how to install it.
func Find(sc ServerConfig) (prog, why string) {
	return lookup(sc, envValue(sandbox.Environ(os.Environ(), nil), "PATH"), SearchDirs())
}

// lookup finds the program of sc on pathList, then in the folders extra;
// when it is not found it returns why, in a sentence that says how to
// install it.
func lookup(sc ServerConfig, pathList string, extra []string) (prog, why string) {
	cmd := sc.Command
	if rest, ok := strings.CutPrefix(cmd, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			cmd = filepath.Join(home, rest)
		}
	}
	how := "install it or set its command in the language-server file (" + FileName + ")"
	if hint := installHint(sc.Name); hint != "" {
		how = "install it (" + hint + ") or set its command in the language-server file (" + FileName + ")"
	}
	switch {
	case cmd == "":
		return "", fmt.Sprintf("the language server %q has no command; set one in the language-server file (%s)", sc.Name, FileName)
	case filepath.IsAbs(cmd):
		if executableFile(cmd) {
			return cmd, ""
		}
		return "", fmt.Sprintf("%s (the language server %q) is not an executable file; %s", cmd, sc.Name, how)
	case strings.ContainsAny(cmd, `/\`):
		return "", fmt.Sprintf("the command %q of the language server %q is a relative path; give a name on PATH or an absolute path", cmd, sc.Name)
	}
	if p := findIn(cmd, filepath.SplitList(pathList)); p != "" {
		return p, ""
	}
	if p := findIn(cmd, extra); p != "" {
		return p, ""
	}
	where := "on PATH"
	if d, err := InstallDir(); err == nil {
		where = "on PATH or in " + d
	}
	return "", fmt.Sprintf("%s (the language server %q) is not %s; %s", cmd, sc.Name, where, how)
}

// findIn returns the executable file named cmd in the first of dirs that
// holds one (relative folders are skipped), "" when none does.
func findIn(cmd string, dirs []string) string {
	exts := []string{""}
	if runtime.GOOS == "windows" && filepath.Ext(cmd) == "" {
		exts = []string{".exe", ".cmd", ".bat"}
	}
	for _, dir := range dirs {
		for _, ext := range exts {
			if p := filepath.Join(dir, cmd+ext); filepath.IsAbs(dir) && executableFile(p) {
				return p
			}
		}
	}
	return ""
}

func executableFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && (fi.Mode()&0o111 != 0 || runtime.GOOS == "windows")
}
