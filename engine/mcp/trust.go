package mcp

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tally-dev/tally/internal/trust"
)

// Bounds of what trusting a workspace's MCP file may cover: a server whose
// command or arguments name workspace folders holding more than this is
// refused trust.
const (
	MaxTrustFiles = trust.MaxFiles
	MaxTrustBytes = trust.MaxBytes
)

// ErrTrustTooLarge is matched (errors.Is) by the error of [TrustHash] when
// the workspace files a server runs exceed [MaxTrustFiles] or
// [MaxTrustBytes].
var ErrTrustTooLarge = trust.ErrTooLarge

// shells are the programs whose "-c" argument is a command line.
var shells = []string{"sh", "bash", "dash", "zsh"}

// TrustHash returns the fingerprint the user trusts for the MCP file of
// workspace ws, whose content is data and parsed form cfg: the file, the
// whole .tally folder, and every workspace file its servers' commands and
// arguments name (see package trust). A relative name is taken from the
// workspace (an argument "--opt=value" also by its value, "-m pkg.mod"
// also by its top package: "pkg" or "pkg.py", the line of `sh -c` as a
// command line); a folder counts by every regular file under it (.git
// excepted), a file inside a folder by that folder, a symlink by its
// target as well. So a change to a script the agent may edit, or to one it
// sources, changes the hash, and trust is asked again. Past
// [MaxTrustFiles] files or [MaxTrustBytes] bytes the file cannot be
// trusted: the error says which server.
func TrustHash(ws string, data []byte, cfg Config) (string, error) {
	p, err := trust.New(ws, "mcp.json", data)
	if err != nil {
		return "", trustError("the .tally folder", ws, err)
	}
	for _, name := range cfg.Names() {
		sc := cfg.Servers[name]
		if sc.Kind() != TypeStdio {
			continue
		}
		err := p.Names(trustCandidates(sc)...)
		if i := slices.Index(sc.Args, "-c"); err == nil && i >= 0 && i+1 < len(sc.Args) && slices.Contains(shells, filepath.Base(sc.Command)) {
			err = p.CommandLine(sc.Args[i+1])
		}
		if err != nil {
			return "", trustError(fmt.Sprintf("the MCP server %q", name), ws, err)
		}
	}
	return p.Sum(), nil
}

// trustError says why what names the files of ws's MCP file cannot be
// trusted.
func trustError(what, ws string, err error) error {
	if errors.Is(err, trust.ErrTooLarge) {
		return trust.TooLarge(what, WorkspacePath(ws))
	}
	return fmt.Errorf("%s runs files that cannot be read (%w), so %s cannot be trusted; fix the files or the configuration", what, err, WorkspacePath(ws))
}

// trustCandidates are the strings of a server's command line that may
// name a workspace file.
func trustCandidates(sc ServerConfig) []string {
	out := []string{sc.Command}
	for i, a := range sc.Args {
		out = append(out, a)
		if _, v, ok := strings.Cut(a, "="); ok && v != "" {
			out = append(out, v)
		}
		if (a == "-m" || a == "--module") && i+1 < len(sc.Args) {
			top, _, _ := strings.Cut(sc.Args[i+1], ".")
			out = append(out, top, top+".py")
		} else if mod, ok := strings.CutPrefix(a, "-m"); ok && mod != "" && !strings.HasPrefix(mod, "-") {
			top, _, _ := strings.Cut(mod, ".")
			out = append(out, top, top+".py")
		}
	}
	return out
}
