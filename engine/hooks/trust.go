package hooks

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"

	"github.com/tally-dev/tally/internal/safefile"
)

// Bounds of the workspace scripts trusting a hooks file covers.
const (
	maxTrustFiles = 64
	maxTrustBytes = 16 << 20
)

// projectVars are the variables a hook command may use for the workspace
// folder; TrustHash reads them as the workspace.
var projectVars = []string{"TALLY_PROJECT_DIR", "CLAUDE_PROJECT_DIR"}

// TrustHash returns the fingerprint the user trusts for the hooks file of
// workspace ws, whose content is data and parsed form hooks: the hex
// SHA-256 of the file and of every regular workspace file a command names
// (a word of the command, or the value of a word "name=value", relative
// to the workspace or spelled with $TALLY_PROJECT_DIR or
// $CLAUDE_PROJECT_DIR). So an edit of a hook script in the repository
// asks for trust again. Names outside the workspace are left out: they
// are not the repository's to change. Past 64 files or 16 MB the file
// cannot be trusted and the error says so.
func TrustHash(ws string, data []byte, hooks []Hook) (string, error) {
	h := sha256.New()
	writeField(h, FileName)
	writeField(h, string(data))
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		real = ws
	}
	seen := map[string]bool{}
	files, bytes := 0, 0
	for _, hk := range hooks {
		for _, word := range commandWords(hk.Command) {
			rel, ok := workspaceFile(real, ws, word)
			if !ok || seen[rel] {
				continue
			}
			seen[rel] = true
			content, cut, err := safefile.Read(filepath.Join(real, rel), maxTrustBytes)
			if err != nil {
				continue // gone or unreadable: the hook fails the same way trusted or not
			}
			files, bytes = files+1, bytes+len(content)
			if cut || files > maxTrustFiles || bytes > maxTrustBytes {
				return "", fmt.Errorf("the hooks of %s name more than %d workspace files or %d MB, so the file cannot be trusted; point the hooks at fewer, smaller scripts", WorkspacePath(ws), maxTrustFiles, maxTrustBytes>>20)
			}
			writeField(h, "file")
			writeField(h, filepath.ToSlash(rel))
			writeField(h, string(content))
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// commandWords splits a shell command line into the words that may name a
// file: quotes are dropped, operators split, and the value of a
// "name=value" word is a word too.
func commandWords(cmd string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		w := cur.String()
		cur.Reset()
		out = append(out, w)
		if _, v, ok := strings.Cut(w, "="); ok && v != "" {
			out = append(out, v)
		}
	}
	for _, r := range cmd {
		switch r {
		case ' ', '\t', '\n', '\r', ';', '|', '&', '(', ')', '<', '>', '`':
			flush()
		case '"', '\'':
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}

// workspaceFile returns word as a clean path relative to the workspace
// (real is its resolved form) when it names a regular file inside it,
// following symlinks only as far as they stay inside.
func workspaceFile(real, ws, word string) (string, bool) {
	for _, v := range projectVars {
		for _, spelled := range []string{"${" + v + "}", "$" + v} {
			if rest, ok := strings.CutPrefix(word, spelled); ok {
				word = real + rest
			}
		}
	}
	if word == "" || strings.ContainsAny(word, "$*?") {
		return "", false
	}
	if !filepath.IsAbs(word) {
		word = filepath.Join(real, word)
	} else if rel, err := filepath.Rel(ws, word); err == nil && filepath.IsLocal(rel) {
		word = filepath.Join(real, rel)
	}
	dest, err := filepath.EvalSymlinks(word)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(real, dest)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	fi, err := os.Stat(dest)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return rel, true
}

// writeField adds s to h with its length first, so fields cannot run into
// each other.
func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}
