package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tally-dev/tally/engine/workbench"
)

// profileUsage is the help of `tally profile`.
const profileUsage = `usage:
  tally profile [list] [--json]          the endpoint profiles, the default one and the model of each role
  tally profile add NAME --base-url URL [--model M] [--key-env VAR | --key-stdin] [--context-window N]
                                         add an endpoint (or change the one called NAME); the key from stdin
                                         goes to the OS keychain, a --key-env variable is read when a session starts
  tally profile remove NAME              forget a profile (its sessions still open; switch them with /model)
  tally profile default NAME|main        the profile new sessions start on (main: the main connection)
  tally profile role ROLE [--profile P] [--model M]
                                         the model of subagents, summaries or briefs; neither flag: the session's own
  tally profile fallback [NAME...]       the fallback chain (up to 3 profiles, main for the main connection) a turn
                                         goes on with when its endpoint fails for good; no NAME: none`

// profileListing is what `tally profile list --json` prints.
type profileListing struct {
	Profiles []profileRow                   `json:"profiles"`
	Default  string                         `json:"default"`
	Roles    map[string]workbench.RoleModel `json:"roles,omitempty"`
	// Fallback is the saved chain with what a switch to each costs.
	Fallback []workbench.FallbackStep `json:"fallback,omitempty"`
}

type profileRow struct {
	Name          string `json:"name"`
	BaseURL       string `json:"base_url"`
	Model         string `json:"model,omitempty"`
	Key           string `json:"key"` // masked, or the variable it is read from
	ContextWindow int    `json:"context_window,omitempty"`
}

// profileFlags is a parsed `tally profile` command line.
type profileFlags struct {
	data, baseURL, model, keyEnv, onProfile string
	keyStdin, json                          bool
	window                                  int
	sub                                     string   // list when none is given
	pos                                     []string // the subcommand's arguments
}

// parseProfile parses the arguments of `tally profile`.
func parseProfile(args []string) (*profileFlags, error) {
	p := &profileFlags{}
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&p.data, "data", "", "")
	fs.StringVar(&p.baseURL, "base-url", "", "")
	fs.StringVar(&p.model, "model", "", "")
	fs.StringVar(&p.keyEnv, "key-env", "", "")
	fs.StringVar(&p.onProfile, "profile", "", "")
	fs.BoolVar(&p.keyStdin, "key-stdin", false, "")
	fs.BoolVar(&p.json, "json", false, "")
	fs.IntVar(&p.window, "context-window", 0, "")
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return nil, usagef("tally profile: %v\n%s", err, profileUsage)
	}
	p.sub = "list"
	if len(pos) > 0 {
		p.sub, pos = pos[0], pos[1:]
	}
	want := map[string]int{"list": 0, "add": 1, "remove": 1, "default": 1, "role": 1, "fallback": -1}
	n, ok := want[p.sub]
	if !ok || (n >= 0 && len(pos) != n) {
		return nil, usagef("tally profile %s: wrong arguments\n%s", p.sub, profileUsage)
	}
	p.pos = pos
	return p, nil
}

// cmdProfile runs `tally profile SUBCOMMAND`.
func cmdProfile(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, err := parseProfile(args)
	if err != nil {
		return err
	}
	pos := f.pos
	w, settingsErr, err := (&options{data: f.data, served: servedBy(stderr)}).open()
	if err != nil {
		return err
	}
	defer w.Close()
	if settingsErr != nil {
		return settingsErr
	}
	s := w.Settings()
	switch f.sub {
	case "list":
		return listProfiles(stdout, w, f.json)
	case "add":
		p := workbench.Profile{Name: pos[0], BaseURL: f.baseURL, Model: f.model, KeyEnv: f.keyEnv, ContextWindow: f.window}
		if f.keyStdin {
			if f.keyEnv != "" {
				return usagef("tally profile add: give --key-env or --key-stdin, not both")
			}
			line, _ := bufio.NewReader(stdin).ReadString('\n')
			if p.APIKey = strings.TrimSpace(line); p.APIKey == "" {
				return fmt.Errorf("tally profile add: no key on stdin; pipe it in, such as `tally profile add %s --base-url URL --key-stdin < key.txt`", pos[0])
			}
		}
		if s, err = s.PutProfile(p); err != nil {
			return err
		}
	case "remove":
		if s, err = s.RemoveProfile(pos[0]); err != nil {
			return err
		}
	case "default":
		if pos[0] == workbench.MainProfile {
			s.Profile = ""
		} else if p, ok := s.ProfileNamed(pos[0]); ok {
			s.Profile = p.Name
		} else {
			return fmt.Errorf("tally profile default: there is no profile called %q; `tally profile list` shows them", pos[0])
		}
	case "role":
		if s, err = s.SetRole(pos[0], workbench.RoleModel{Profile: f.onProfile, Model: f.model}); err != nil {
			return err
		}
	case "fallback":
		if s, err = s.SetFallback(pos); err != nil {
			return err
		}
	}
	if err := w.SaveSettings(s); err != nil {
		return err
	}
	return listProfiles(stdout, w, false)
}

// previewTokens is the context a fallback chain's preview prices when no
// session is named: a mid-sized coding session.
const previewTokens = 50_000

// listProfiles prints the saved profiles, the default, the roles and the
// fallback chain with what a switch to each fallback costs.
func listProfiles(stdout io.Writer, w *workbench.Workbench, asJSON bool) error {
	s := w.Settings()
	l := profileListing{Default: s.Profile, Roles: s.Roles}
	l.Fallback, _ = w.FallbackPreview(nil, s.Profile, previewTokens) // the saved chain was checked when saved
	if l.Default == "" {
		l.Default = workbench.MainProfile
	}
	for _, p := range s.Profiles {
		key := workbench.Mask(p.APIKey)
		if p.KeyEnv != "" {
			key = "$" + p.KeyEnv
		}
		l.Profiles = append(l.Profiles, profileRow{Name: p.Name, BaseURL: p.BaseURL, Model: p.Model, Key: key, ContextWindow: p.ContextWindow})
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(l)
	}
	if len(l.Profiles) == 0 {
		fmt.Fprintln(stdout, "no endpoint profiles; add one with `tally profile add NAME --base-url URL --model M`")
	}
	for _, p := range l.Profiles {
		model := p.Model
		if model == "" {
			model = "(the default model)"
		}
		fmt.Fprintf(stdout, "%s\t%s\t%s\tkey %s\n", p.Name, safeText(p.BaseURL), safeText(model), p.Key)
	}
	fmt.Fprintf(stdout, "new sessions start on: %s\n", l.Default)
	for _, role := range workbench.RoleNamesInOrder() {
		if m, ok := l.Roles[role]; ok {
			fmt.Fprintf(stdout, "%s use: %s\n", role, safeText(m.String()))
		}
	}
	printFallback(stdout, l.Fallback)
	return nil
}

// printFallback prints a fallback chain's preview: each fallback and what
// a switch to it costs, the context re-sent at its miss price.
func printFallback(stdout io.Writer, chain []workbench.FallbackStep) {
	if len(chain) == 0 {
		fmt.Fprintln(stdout, "fallback: none (set one with `tally profile fallback NAME`)")
		return
	}
	for i, st := range chain {
		where := "the same provider"
		if st.OtherProvider {
			where = "another provider"
		}
		cost := "price unknown"
		if st.Priced {
			cost = fmt.Sprintf("$%.4f", st.Cost)
		}
		line := fmt.Sprintf("fallback %d: %s (%s on %s, %s): a new cache prefix, %d tokens re-sent at the miss price: %s",
			i+1, st.Profile, safeText(st.Model), safeText(st.Host), where, st.Tokens, cost)
		if st.Problem != "" {
			line += "; not usable now: " + safeText(st.Problem)
		}
		fmt.Fprintln(stdout, line)
	}
}
