package cli

import (
	"io"
	"os"
)

// terminalIn returns stdin as a file when it is a terminal a person can
// answer on. /dev/null and other character devices are not: a command
// run with stdin from /dev/null (cron, CI, nohup) has nobody to ask.
func terminalIn(stdin io.Reader) (*os.File, bool) {
	f, ok := stdin.(*os.File)
	if !ok || !isTerminal(f) {
		return nil, false
	}
	return f, true
}
