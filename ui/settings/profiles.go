package settings

import (
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/workbench"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Settings → Endpoint profiles: named endpoints besides the main
// connection (a local llama.cpp, OpenAI…), the one new sessions start
// on, and a cheaper model per role (sub-agents, summaries, briefs).
// Add profile… and each row's Edit… open a small form that checks the
// profile and stays open until it is right; the changes, like every
// other field, are stored by the settings' Save.

// MainChoice and ownEndpoint are the choices for "no profile": MainChoice
// is how every endpoint picker of the window names the main connection.
const (
	MainChoice  = "Main connection"
	ownEndpoint = "Session's endpoint"
)

// roleLabels name the roles on the form.
var roleLabels = map[string]string{
	workbench.RoleSubagents: "Sub-agents",
	workbench.RoleSummaries: "Summaries",
	workbench.RoleBriefs:    "Hand-off briefs",
}

// profileSection is the profiles part of the settings form.
type profileSection struct {
	f     *Form
	rows  *fyne.Container
	note  *widget.Label // what the last change did, next to Add profile…
	def   *widget.Select
	roles map[string]*roleField
	// chain names the fallback profiles; chainNote previews their cost.
	chain     *tw.EscEntry
	chainNote *widget.Label
	box       *fyne.Container
}

// roleField chooses one role's model: an endpoint and a model name.
type roleField struct {
	profile *widget.Select
	model   *tw.EscEntry
}

func newProfileSection(f *Form) *profileSection {
	p := &profileSection{f: f, rows: container.NewVBox(), roles: map[string]*roleField{}, note: caption("")}
	p.def = widget.NewSelect(nil, nil)
	add := &widget.Button{Text: "Add profile…", Icon: theme.ContentAddIcon(), OnTapped: func() { p.showForm(nil) }}
	roles := container.New(layout.NewFormLayout())
	for _, role := range workbench.RoleNamesInOrder() {
		r := &roleField{profile: widget.NewSelect(nil, nil), model: tw.NewEscEntry()}
		rm := f.saved.Roles[role]
		r.model.SetText(rm.Model)
		r.model.SetPlaceHolder("the endpoint's model")
		p.roles[role] = r
		roles.Add(widget.NewLabel(roleLabels[role]))
		roles.Add(container.NewGridWithColumns(2, r.profile, r.model))
	}
	p.refresh()
	p.def.SetSelected(orChoice(f.saved.Profile, MainChoice))
	for role, r := range p.roles {
		r.profile.SetSelected(orChoice(f.saved.Roles[role].Profile, ownEndpoint))
	}
	p.chain, p.chainNote = tw.NewEscEntry(), caption("")
	p.chainNote.Wrapping = fyne.TextWrapWord
	p.chain.SetPlaceHolder("none — e.g. local, main")
	p.chain.SetText(strings.Join(f.saved.Fallback, ", "))
	p.chain.OnChanged = func(string) { p.previewChain() }
	p.previewChain()
	p.box = container.NewVBox(p.rows, container.NewBorder(nil, nil, add, nil, p.note),
		container.NewBorder(nil, nil, widget.NewLabel("New sessions start on"), nil, p.def),
		&widget.Label{Text: "A cheaper model per role (empty: the session's own model)", Importance: widget.LowImportance, SizeName: theme.SizeNameCaptionText},
		roles,
		container.NewBorder(nil, nil, widget.NewLabel("Fallback chain"), nil, p.chain), p.chainNote)
	return p
}

// chainNames are the names typed in the fallback chain's field.
func (p *profileSection) chainNames() []string {
	var out []string
	for _, n := range strings.Split(p.chain.Text, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// previewChain says under the fallback chain's field what a switch to
// each fallback costs: a new cache prefix, the context re-sent at the
// fallback's miss price.
func (p *profileSection) previewChain() {
	names := p.chainNames()
	if len(names) == 0 || p.f.h.PreviewFallback == nil {
		p.chainNote.SetText("When the endpoint fails for good (overloaded, errors after retries, a rate limit past its wait, a model gone), a turn goes on with these profiles in order (up to 3; main is the main connection).")
		return
	}
	steps, err := p.f.h.PreviewFallback(p.f.saved, names)
	if err != nil {
		p.chainNote.SetText(tw.Sentence(err.Error()))
		return
	}
	var lines []string
	for _, st := range steps {
		cost := "at a price not known"
		if st.Priced {
			cost = "costs " + tw.Dollars(st.Cost) + " at its miss price"
		}
		line := st.Profile + ": " + st.Model + " on " + st.Host + " — a new cache prefix; re-sending " + tw.TokensShort(st.Tokens) + " tokens " + cost
		if st.Problem != "" {
			line += " (not usable now: " + tw.Sentence(st.Problem) + ")"
		}
		lines = append(lines, line)
	}
	p.chainNote.SetText(strings.Join(lines, "\n"))
}

// orChoice is v, or def when v is "".
func orChoice(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// item is the section's row of the settings form.
func (p *profileSection) item() *widget.FormItem {
	return &widget.FormItem{Text: "Endpoint profiles", Widget: p.box,
		HintText: "other endpoints a session can start on or switch to with /model @NAME; their keys are kept like the main one"}
}

// refresh shows the pending profiles and offers them in the selects,
// keeping what is selected when it is still there.
func (p *profileSection) refresh() {
	names := p.f.saved.ProfileNames()
	p.rows.RemoveAll()
	for _, pr := range p.f.saved.Profiles {
		model := pr.Model
		if model == "" {
			model = "the default model"
		}
		name := pr.Name
		row := container.NewBorder(nil, nil, nil,
			container.NewHBox(
				&widget.Button{Text: "Edit…", Icon: theme.DocumentCreateIcon(), Importance: widget.LowImportance, OnTapped: func() {
					if pr, ok := p.f.saved.ProfileNamed(name); ok {
						p.showForm(&pr)
					}
				}},
				&widget.Button{Text: "Remove", Icon: theme.DeleteIcon(), Importance: widget.LowImportance, OnTapped: func() { p.remove(name) }}),
			&widget.Label{Text: pr.Name + " — " + model + " at " + pr.BaseURL, Truncation: fyne.TextTruncateEllipsis})
		p.rows.Add(row)
	}
	keep := func(s *widget.Select, first string) {
		sel := s.Selected
		s.Options = append([]string{first}, names...)
		if sel == "" || (sel != first && !slices.Contains(names, sel)) {
			sel = first
		}
		s.SetSelected(sel)
		s.Refresh()
	}
	keep(p.def, MainChoice)
	for _, r := range p.roles {
		keep(r.profile, ownEndpoint)
	}
}

// remove drops profile name from the pending settings.
func (p *profileSection) remove(name string) {
	s, err := p.f.saved.RemoveProfile(name)
	if err != nil {
		p.note.SetText(tw.Sentence(err.Error()))
		return
	}
	p.f.saved = s
	p.refresh()
	p.note.SetText("Removed " + name + "; Save keeps the change.")
}

// apply writes the default profile and the roles into s.
func (p *profileSection) apply(s *workbench.Settings) error {
	s.Profiles = p.f.saved.Profiles
	s.Profile = ""
	if p.def.Selected != MainChoice {
		s.Profile = p.def.Selected
	}
	var err error
	if *s, err = s.SetFallback(p.chainNames()); err != nil {
		return err
	}
	for role, r := range p.roles {
		m := workbench.RoleModel{Model: strings.TrimSpace(r.model.Text)}
		if r.profile.Selected != ownEndpoint {
			m.Profile = r.profile.Selected
		}
		if *s, err = s.SetRole(role, m); err != nil {
			return err
		}
	}
	return nil
}

// endpointForm is the Add or Edit profile dialog.
type endpointForm struct {
	p                                 *profileSection
	name, baseURL, model, keyEnv, win *tw.EscEntry
	key                               *widget.Entry
	*editDialog
}

// showForm opens the form for a new profile (pr nil) or for editing pr.
func (p *profileSection) showForm(pr *workbench.Profile) *endpointForm {
	f := &endpointForm{p: p}
	entry := func(ph string) *tw.EscEntry {
		return formEntry(ph, f.submit)
	}
	f.name, f.baseURL, f.model = entry("local"), entry("http://127.0.0.1:8080/v1"), entry("qwen3-8b (optional)")
	f.keyEnv, f.win = entry("LOCAL_API_KEY (optional)"), entry("from the model table")
	f.key = widget.NewPasswordEntry()
	f.key.SetPlaceHolder("not set")
	f.key.OnSubmitted = func(string) { f.submit() }
	title := "Add endpoint profile"
	if pr != nil {
		title = "Edit " + pr.Name
		f.name.SetText(pr.Name)
		f.name.Disable()
		f.baseURL.SetText(pr.BaseURL)
		f.model.SetText(pr.Model)
		f.keyEnv.SetText(pr.KeyEnv)
		if pr.ContextWindow > 0 {
			f.win.SetText(strconv.Itoa(pr.ContextWindow))
		}
		if pr.APIKey != "" {
			f.key.SetPlaceHolder("saved " + workbench.Mask(pr.APIKey) + " — type to replace")
		}
	}
	save := "Add"
	if pr != nil {
		save = "Keep"
	}
	win := p.f.h.Window
	f.editDialog = newEditDialog(win, title, save, []*widget.FormItem{
		{Text: "Name", Widget: f.name, HintText: "lower-case letters, digits and '-'; /model @NAME switches to it"},
		{Text: "Base URL", Widget: f.baseURL},
		{Text: "Model", Widget: f.model},
		{Text: "API key", Widget: f.key, HintText: "kept in the system keychain; leave empty for a local server"},
		{Text: "Key variable", Widget: f.keyEnv, HintText: "or an environment variable that holds the key, read when a session starts"},
		{Text: "Context window", Widget: f.win, HintText: "tokens; empty uses the known size of the model"},
	}, 440, f.submit)
	if pr != nil {
		win.Canvas().Focus(f.baseURL)
	} else {
		win.Canvas().Focus(f.name)
	}
	return f
}

// submit checks the profile, saying what is wrong under the form, and
// puts it in the pending settings.
func (f *endpointForm) submit() {
	pr := workbench.Profile{Name: strings.TrimSpace(f.name.Text), BaseURL: f.baseURL.Text, Model: f.model.Text,
		APIKey: strings.TrimSpace(f.key.Text), KeyEnv: strings.TrimSpace(f.keyEnv.Text)}
	if w := strings.TrimSpace(f.win.Text); w != "" {
		n, err := strconv.Atoi(strings.ReplaceAll(w, ",", ""))
		if err != nil || n < 1000 {
			f.fail("The context window " + strconv.Quote(w) + " is not a number of tokens; type something like 32000 or leave it empty.")
			return
		}
		pr.ContextWindow = n
	}
	if _, taken := f.p.f.saved.ProfileNamed(pr.Name); taken && !f.name.Disabled() {
		f.fail("A profile named " + pr.Name + " exists already; edit it in the list, or choose another name.")
		return
	}
	s, err := f.p.f.saved.PutProfile(pr)
	if err != nil {
		f.fail(tw.Sentence(err.Error()))
		return
	}
	f.p.f.saved = s
	f.dlg.Hide()
	f.p.refresh()
	f.p.note.SetText("Profile " + pr.Name + " is ready; Save keeps it.")
}
