package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// lookup finds the program of sc on pathList; when it is not found it
// returns why, in a sentence that says how to install it.
func lookup(sc ServerConfig, pathList string) (prog, why string) {
	cmd := sc.Command
	if rest, ok := strings.CutPrefix(cmd, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			cmd = filepath.Join(home, rest)
		}
	}
	how := "install it or set its command in the language-server file (" + FileName + ")"
	if hint := installHints[sc.Name]; hint != "" {
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
	exts := []string{""}
	if runtime.GOOS == "windows" && filepath.Ext(cmd) == "" {
		exts = []string{".exe", ".cmd", ".bat"}
	}
	for _, dir := range filepath.SplitList(pathList) {
		for _, ext := range exts {
			if p := filepath.Join(dir, cmd+ext); filepath.IsAbs(dir) && executableFile(p) {
				return p, ""
			}
		}
	}
	return "", fmt.Sprintf("%s (the language server %q) is not on PATH; %s", cmd, sc.Name, how)
}

func executableFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && (fi.Mode()&0o111 != 0 || runtime.GOOS == "windows")
}
