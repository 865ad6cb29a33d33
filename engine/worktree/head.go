package worktree

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/tally-dev/tally/internal/safefile"
)

// headLimit bounds what is read of a HEAD or .git file.
const headLimit = 4096

// CurrentBranch returns the branch the git checkout at dir is on, read
// from its HEAD file without running git (dir's own .git folder, or the
// one a linked worktree's .git file points to); a detached checkout gives
// its commit's first 12 hex digits, and a folder that is no checkout, or
// whose HEAD cannot be read, gives "". It never follows dir upwards.
func CurrentBranch(dir string) string {
	gitDir := filepath.Join(dir, ".git")
	fi, err := os.Lstat(gitDir)
	if err != nil {
		return ""
	}
	if fi.Mode().IsRegular() {
		data, _, err := safefile.Read(gitDir, headLimit)
		if err != nil {
			return ""
		}
		link, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return ""
		}
		gitDir = strings.TrimSpace(link)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(dir, gitDir)
		}
	}
	data, _, err := safefile.Read(filepath.Join(gitDir, "HEAD"), headLimit)
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(data))
	if ref, ok := strings.CutPrefix(head, "ref:"); ok {
		return strings.TrimPrefix(strings.TrimSpace(ref), "refs/heads/")
	}
	if len(head) >= 12 && strings.Trim(head, "0123456789abcdef") == "" {
		return head[:12]
	}
	return ""
}
