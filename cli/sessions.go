package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tally-dev/tally/engine/workbench"
)

// sessionRow is the JSON form of one listed session.
type sessionRow struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Workspace string    `json:"workspace"`
	Model     string    `json:"model"`
	Updated   time.Time `json:"updated"`
	Cycle     int       `json:"cycle"`
	Messages  int       `json:"messages"`
	ForkOf    string    `json:"fork_of,omitempty"`   // the session it was forked from
	ForkTurn  int       `json:"fork_turn,omitempty"` // the turn it was forked at
}

func cmdSessions(args []string, stdout, stderr io.Writer) error {
	o, err := parse("sessions", args, stderr)
	if err != nil {
		return err
	}
	if len(o.args) > 0 {
		return usagef("tally sessions: takes no arguments, got %q", o.args[0])
	}
	w, _, err := o.open()
	if err != nil {
		return err
	}
	defer w.Close()
	list, err := w.SessionSummaries()
	if err != nil {
		return err
	}
	rows := make([]sessionRow, 0, len(list))
	for _, s := range list {
		rows = append(rows, sessionRow{s.ID, s.Title, s.Workspace, s.Model, s.Updated, s.Cycle, s.Messages, s.ForkOf, s.ForkTurn})
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	for i, r := range rows {
		fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\tcycle %d\t%d messages\t%s",
			r.ID, r.Title, r.Workspace, r.Model, r.Cycle, r.Messages, r.Updated.Local().Format("2006-01-02 15:04"))
		if line := workbench.Lineage(list[i].SessionInfo, nil); line != "" {
			fmt.Fprintf(stdout, "\t%s", line)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}
