package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/tally-dev/tally/engine/chat"
	"github.com/tally-dev/tally/engine/workbench"
)

// effortFlag is one --effort: a role (workbench.EffortSession for the
// session's own) and its level.
type effortFlag struct {
	role  string
	level chat.Effort
}

// parseEffortFlag reads LEVEL or ROLE=LEVEL.
func parseEffortFlag(v string) (effortFlag, error) {
	f := effortFlag{role: workbench.EffortSession}
	if role, level, ok := strings.Cut(v, "="); ok {
		f.role, v = strings.TrimSpace(role), level
	}
	level, err := workbench.ParseEffort(v)
	if err != nil {
		return f, fmt.Errorf("--effort: %w", err)
	}
	f.level = level
	return f, nil
}

// applyEfforts sets the --effort levels on session id from its next
// request on, recording each change, and says on stderr what the session
// and its roles now send.
func applyEfforts(w *workbench.Workbench, id string, efforts []effortFlag, stderr io.Writer) error {
	if len(efforts) == 0 {
		return nil
	}
	for _, e := range efforts {
		if err := w.SetEffort(id, e.role, e.level); err != nil {
			return usagef("tally run: --effort: %v", err)
		}
	}
	fmt.Fprintf(stderr, "effort: %s\n", workbench.EffortLine(w.Efforts(id)))
	return nil
}
