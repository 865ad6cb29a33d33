package status

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/tally-dev/tally/internal/safefile"
)

// maxGitFile caps what is read of .git (a worktree pointer) and HEAD: both
// are a line long, and a HEAD linked to /dev/zero or a FIFO must neither
// grow memory nor hang the session.
const maxGitFile = 4 << 10

// GitBranch reads the current branch of the repository containing dir from
// .git/HEAD, without running git. It returns "" when dir is not in a
// repository or HEAD cannot be read, and "detached@<short sha>" for a
// detached HEAD. Only regular files are read, each at most maxGitFile bytes.
func GitBranch(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		gitPath := filepath.Join(d, ".git")
		st, err := os.Stat(gitPath)
		if err == nil {
			head := filepath.Join(gitPath, "HEAD")
			if !st.IsDir() {
				// A worktree or submodule: ".git" is a file "gitdir: <path>".
				b, _, err := safefile.Read(gitPath, maxGitFile)
				if err != nil {
					return ""
				}
				g := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "gitdir:"))
				if !filepath.IsAbs(g) {
					g = filepath.Join(d, g)
				}
				head = filepath.Join(g, "HEAD")
			}
			b, _, err := safefile.Read(head, maxGitFile)
			if err != nil {
				return ""
			}
			h := strings.TrimSpace(string(b))
			if ref, ok := strings.CutPrefix(h, "ref: refs/heads/"); ok {
				return ref
			}
			if len(h) >= 7 {
				return "detached@" + h[:7]
			}
			return ""
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
