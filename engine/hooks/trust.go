package hooks

import (
	"errors"
	"fmt"

	"github.com/tally-dev/tally/internal/trust"
)

// TrustHash returns the fingerprint the user trusts for the hooks file of
// workspace ws, whose content is data and parsed form hooks: the file, the
// whole .tally folder, and every workspace file or folder a command line
// names, read with a shell parser and taken from where a `cd` went
// (spelled relative to the workspace or with $TALLY_PROJECT_DIR or
// $CLAUDE_PROJECT_DIR); a named script inside a folder counts by that
// folder, a script at the root also by what it sources (see package
// trust). So an edit of a hook script, or of a file it sources, asks for
// trust again. Past trust.MaxFiles files or trust.MaxBytes the file cannot
// be trusted and the error says so.
func TrustHash(ws string, data []byte, hooks []Hook) (string, error) {
	return trustHash(ws, data, hooks, nil)
}

// trustHash is TrustHash with every path it looks at recorded in w (nil:
// none).
func trustHash(ws string, data []byte, hooks []Hook, w *trust.Watch) (string, error) {
	p, err := trust.NewWatched(ws, FileName, data, w)
	for i := 0; err == nil && i < len(hooks); i++ {
		err = p.CommandLine(hooks[i].Command)
	}
	switch {
	case errors.Is(err, trust.ErrTooLarge):
		return "", trust.TooLarge("a hook", WorkspacePath(ws))
	case err != nil:
		return "", fmt.Errorf("the files the hooks of %s run cannot be read (%w), so it cannot be trusted; fix them or the hooks", WorkspacePath(ws), err)
	}
	return p.Sum(), nil
}
