package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/workbench"
)

// runBuiltin performs a built-in command given to tally run as its prompt
// ("tally run /compact"), sending nothing to the model: /compact and
// /new-cycle act on the session given with --session, /help lists the
// commands, /model says which model a run uses, and /rewind, which picks
// a turn in a dialog, points to tally rewind.
func runBuiltin(o *options, inv command.Invocation, stdout, stderr io.Writer) error {
	c := inv.Command
	if c.Action == command.ActionRewind {
		to := "TURN"
		if inv.Turn > 0 {
			to = strconv.Itoa(inv.Turn)
		}
		return usagef("tally run: /rewind opens the Rewind dialog of the app; on the command line run tally rewind %s --to %s", cmp.Or(o.session, "SESSION"), to)
	}
	if (c.Action == command.ActionCompact || c.Action == command.ActionNewCycle) && o.session == "" {
		return usagef("tally run: /%s acts on a stored session; name it with --session ID (tally sessions lists them)", c.Name)
	}
	w, settingsErr, err := o.open()
	if err != nil {
		return err
	}
	defer w.Close()
	if settingsErr != nil {
		return settingsErr
	}
	var info workbench.SessionInfo
	if o.session != "" {
		if err := checkSession(w, "run", o.session); err != nil {
			return err
		}
		if info, err = w.Session(o.session); err != nil {
			return err
		}
	}
	cfg, cfgErr := w.Config(o.sessionOptions(o.session))
	switch c.Action {
	case command.ActionHelp:
		if cfgErr != nil && !errors.Is(cfgErr, workbench.ErrNoModel) {
			return cfgErr
		}
		return printHelp(o, cfg.UserConfigDir, cmp.Or(info.Workspace, o.workspace), stdout, stderr)
	case command.ActionModel:
		switching := inv.Profile != "" || inv.Model != ""
		if cfgErr != nil && !(switching && errors.Is(cfgErr, workbench.ErrNoModel)) {
			return cfgErr // a switch needs only the endpoint it switches to
		}
		if !switching {
			fmt.Fprintf(stdout, "tally run talks to %s; choose another with --model NAME or --profile NAME, or switch a session with /model [@PROFILE] [NAME]\n", modelOn(cfg.ModelName, cfg.Profile))
			return nil
		}
		if o.session == "" {
			return usagef("tally run: /model switches a stored session; name it with --session ID, or start a new one with --model or --profile")
		}
		return switchModel(w, cfg, o.session, inv, stdout)
	}
	if cfgErr != nil {
		return cfgErr
	}
	sess, err := w.OpenSession(cfg, o.session)
	if err != nil {
		return err
	}
	defer sess.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if c.Action == command.ActionCompact {
		res, err := sess.Compaction().Apply(ctx)
		if err != nil {
			return err
		}
		return reportCompaction(stdout, o.json, sess.Snapshot().Meta.ID, res)
	}
	if err := sess.Compaction().NewCycle(ctx); err != nil {
		return fmt.Errorf("tally run: /new-cycle failed: %w", err)
	}
	cycle := sess.Snapshot().Meta.Cycle
	if o.json {
		return json.NewEncoder(stdout).Encode(map[string]any{"session": sess.Snapshot().Meta.ID, "cycle": cycle})
	}
	fmt.Fprintf(stdout, "session %s: cycle %d started from the hand-off brief; tally archive %s lists the earlier ones\n", sess.Snapshot().Meta.ID, cycle, sess.Snapshot().Meta.ID)
	return nil
}

// printHelp lists the built-in commands and the command files a session
// in workspace ("": the current folder) has, and the notes of the files
// left out (with --json, one JSON object a command, and the notes on
// stderr).
func printHelp(o *options, userConfigDir, workspace string, stdout, stderr io.Writer) error {
	if workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("tally run: cannot read the current folder (%w); pass --workspace", err)
		}
		workspace = wd
	}
	cmds, notes := command.List(userConfigDir, workspace)
	if o.json {
		for _, c := range cmds {
			row := map[string]string{"name": c.Name, "usage": c.Usage(), "description": c.Description, "source": string(c.Source)}
			if c.File != "" {
				row["file"] = c.File
			}
			if c.Problem != "" {
				row["problem"] = c.Problem
			}
			b, err := json.Marshal(row)
			if err != nil {
				return err
			}
			if _, err := stdout.Write(safeJSON(append(b, '\n'))); err != nil {
				return err
			}
		}
		for _, n := range notes {
			fmt.Fprintln(stderr, "note:", safeText(n))
		}
		return nil
	}
	io.WriteString(stdout, safeText(command.HelpText(cmds, notes)))
	fmt.Fprintln(stdout, "The MCP servers' prompts are commands too: tally mcp list --probe lists them.")
	return nil
}

// switchModel switches stored session id to the model inv names, as
// /model does in the app.
func switchModel(w *workbench.Workbench, cfg agent.Config, id string, inv command.Invocation, stdout io.Writer) error {
	profile := inv.Profile
	if profile == "" {
		profile = cmp.Or(cfg.Profile, workbench.MainProfile) // the session's own endpoint
	}
	m, err := w.ModelChoice(profile, inv.Model)
	if err != nil {
		return fmt.Errorf("tally run: /model: %w", err)
	}
	sess, err := w.OpenSession(cfg, id)
	if err != nil {
		return err
	}
	defer sess.Close()
	if err := sess.SwitchModel(m); err != nil {
		return fmt.Errorf("tally run: /model: %w", err)
	}
	fmt.Fprintf(stdout, "session %s now talks to %s; its next request starts that model's cache afresh (the ledger records the switch)\n", id, modelOn(m.ModelName, m.Profile))
	return nil
}

// modelOn names a model with the profile it is on.
func modelOn(model, profile string) string {
	if profile == "" {
		return model
	}
	return model + " on profile " + profile
}
