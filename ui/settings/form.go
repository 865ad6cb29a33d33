package settings

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// Form is the content of the Settings dialog: its sections (the
// connection, models and profiles, safety, context and cost, extensions,
// appearance) listed on the left, the shown one on the right. The API key
// is never put into a widget: the password entry starts empty and its
// placeholder shows the masked saved key; leaving it empty keeps the
// saved key.
type Form struct {
	widget.BaseWidget

	h         Host
	saved     workbench.Settings
	baseURL   *tw.EscEntry
	model     *tw.EscEntry
	apiKey    *widget.Entry
	forgetKey *widget.Check
	window    *tw.EscEntry
	hit       *tw.EscEntry
	miss      *tw.EscEntry
	compl     *tw.EscEntry
	theme     *widget.Select
	compactM  *widget.Select
	cycleAt   *tw.EscEntry
	cyclesOff *widget.Check
	warmUp    *widget.Check
	notify    *widget.Check
	memory    *widget.Check
	safety    safetyFields
	cache     cacheFields
	keep      keepFields
	lsp       *lspSection
	profiles  *profileSection
	vision    *visionField // "The model accepts images" (see vision.go)
	testB     *widget.Button
	// result says what Test connection found, or why it could not test.
	result *widget.Label
	// resultIsProblem says result holds a problem with the fields, which
	// goes away once they are fixed.
	resultIsProblem bool
	// problem says, under the sections, why Save refused the fields.
	problem  *widget.Label
	sections []*section
	form     fyne.CanvasObject
}

var themeChoices = []string{"Follow the system", "Light", "Dark"}

func themeLabel(v string) string {
	switch v {
	case "light":
		return "Light"
	case "dark":
		return "Dark"
	}
	return "Follow the system"
}

func themeValue(label string) string {
	switch label {
	case "Light":
		return "light"
	case "Dark":
		return "dark"
	}
	return ""
}

var compactionChoices = []string{"Automatic", "Ask me first", "Off"}

func compactionLabel(v string) string {
	switch v {
	case workbench.CompactionAsk:
		return "Ask me first"
	case workbench.CompactionOff:
		return "Off"
	}
	return "Automatic"
}

func compactionValue(label string) string {
	switch label {
	case "Ask me first":
		return workbench.CompactionAsk
	case "Off":
		return workbench.CompactionOff
	}
	return workbench.CompactionAuto
}

func priceText(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// newForm builds the form pre-filled from the environment and the saved
// settings.
func newForm(h Host) *Form {
	r := h.Resolve(h.Saved)
	f := &Form{h: h, saved: h.Saved}
	f.baseURL = tw.NewEscEntry()
	f.baseURL.SetPlaceHolder("https://api.deepseek.com/v1")
	f.baseURL.SetText(r.BaseURL)
	f.model = tw.NewEscEntry()
	f.model.SetText(r.Model)
	f.apiKey = widget.NewPasswordEntry()
	keyHint := "kept in the system keychain, or in Tally's local store where there is none"
	switch r.KeySource {
	case "":
		f.apiKey.SetPlaceHolder("not set")
	case "settings":
		f.apiKey.SetPlaceHolder("saved " + workbench.Mask(r.APIKey) + " — type to replace")
		if h.Saved.KeyStore != workbench.KeyInKeychain {
			keyHint = "kept in Tally's local store: no system keychain was found"
		}
	default:
		f.apiKey.SetPlaceHolder("from " + r.KeySource + " " + workbench.Mask(r.APIKey) + " — type to save one here")
	}
	f.forgetKey = widget.NewCheck("Forget the saved key", nil)
	if h.Saved.APIKey == "" {
		f.forgetKey.Hide()
	}
	f.window = tw.NewEscEntry()
	f.window.SetPlaceHolder("from the model table")
	if h.Saved.ContextWindow > 0 {
		f.window.SetText(strconv.Itoa(h.Saved.ContextWindow))
	}
	f.hit, f.miss, f.compl = tw.NewEscEntry(), tw.NewEscEntry(), tw.NewEscEntry()
	for _, e := range []*tw.EscEntry{f.hit, f.miss, f.compl} {
		e.SetPlaceHolder("unknown")
	}
	f.fillPrices()
	f.vision = newVisionField(h.Saved, r.Model)
	f.model.OnChanged = func(m string) { f.fillPrices(); f.vision.follow(f.saved, m) }
	f.theme = widget.NewSelect(themeChoices, nil)
	f.theme.SetSelected(themeLabel(h.Saved.Theme))
	f.compactM = widget.NewSelect(compactionChoices, nil)
	f.compactM.SetSelected(compactionLabel(h.Saved.Compaction))
	f.cycleAt = tw.NewEscEntry()
	f.cycleAt.SetPlaceHolder("75 (default)")
	if h.Saved.CycleAt > 0 {
		f.cycleAt.SetText(strconv.FormatFloat(h.Saved.CycleAt*100, 'f', -1, 64))
	}
	f.cyclesOff = widget.NewCheck("No cycles", func(off bool) {
		if off {
			f.cycleAt.Disable()
		} else {
			f.cycleAt.Enable()
		}
	})
	f.cyclesOff.SetChecked(h.Saved.CyclesOff)
	f.warmUp = widget.NewCheck("Warm the cache when a session is created", nil)
	f.warmUp.SetChecked(h.Saved.WarmUp)
	f.notify = widget.NewCheck("Notify me when a turn ends or waits for me", nil)
	f.notify.SetChecked(!h.Saved.NoNotifications)
	f.memory = widget.NewCheck("Propose memory from a session when I leave it", nil)
	f.memory.SetChecked(!h.Saved.NoMemoryOnLeave)
	f.safety = newSafetyFields(h.Saved)
	f.cache = newCacheFields(h.Saved)
	f.keep = newKeepFieldsFor(h, r.Model)
	f.lsp = newLSPSection(h)
	f.profiles = newProfileSection(f)
	f.result = &widget.Label{Wrapping: fyne.TextWrapWord}
	f.testB = &widget.Button{Text: "Test connection", Icon: theme.MediaPlayIcon(), OnTapped: f.test}
	f.problem = &widget.Label{Wrapping: fyne.TextWrapWord, Importance: widget.DangerImportance}
	f.problem.Hide()
	f.watch(&f.baseURL.Entry, &f.model.Entry, &f.window.Entry, &f.hit.Entry, &f.miss.Entry, &f.compl.Entry, &f.cycleAt.Entry,
		&f.safety.shellEnv.Entry, &f.safety.connect.Entry, &f.safety.firstByte.Entry, &f.safety.idle.Entry)

	prices := container.NewGridWithColumns(3,
		labelled("cache hit", f.hit), labelled("cache miss", f.miss), labelled("completion", f.compl))
	f.form = f.layOut(
		newSection(sectionConnection, []*widget.FormItem{
			{Text: "Base URL", Widget: f.baseURL, HintText: "any OpenAI-compatible endpoint, ending in /v1"},
			{Text: "Model", Widget: f.model},
			{Text: "API key", Widget: container.NewVBox(f.apiKey, f.forgetKey), HintText: keyHint},
			{Widget: container.NewBorder(nil, nil, container.NewVBox(f.testB), nil, withRoom(2, f.result))},
			f.safety.timeouts(),
		}),
		newSection(sectionModels, []*widget.FormItem{
			{Text: "Context window", Widget: f.window, HintText: "tokens; empty uses the known size of the model"},
			f.vision.item(),
			f.profiles.item(),
		}),
		newSection(sectionSafety, f.safety.items()),
		newSection(sectionCost, append([]*widget.FormItem{
			{Text: "Prices", Widget: prices, HintText: "US$ per million tokens for this model; empty shows cost as n/a"},
			{Text: "Compaction", Widget: f.compactM,
				HintText: "rewrites the history once: the next request misses the cache; Ask shows the preview first"},
			f.keep.item(),
			{Text: "New cycle at", Widget: container.NewBorder(nil, nil, nil, container.NewHBox(widget.NewLabel("% of the window"), f.cyclesOff), f.cycleAt),
				HintText: "compaction triggers first, 10 % of the window earlier; if it cannot keep the context down, a cycle restarts from a hand-off brief (the next request misses the cache)"},
			{Text: "Cache warm-up", Widget: f.warmUp,
				HintText: "one small request per new session (the prefix at the miss price) so the first turn hits the cache"},
			{Text: "Memory", Widget: f.memory,
				HintText: fmt.Sprintf("after %d turns or more, one request in the background; the entries wait in the Memory panel for you", workbench.MemoryDueTurns)},
		}, f.cache.items(r.BaseURL)...)),
		newSection(sectionExtensions, []*widget.FormItem{
			{Text: "MCP servers", Widget: &widget.Button{Text: "Manage MCP servers…", Icon: theme.ComputerIcon(), OnTapped: h.ShowMCP},
				HintText: "add, test, enable or remove the servers whose tools the agent may call"},
			{Text: "Hooks", Widget: &widget.Button{Text: "Show hooks…", Icon: theme.ListIcon(), OnTapped: h.ShowHooks},
				HintText: "commands run at session start, before a message, around tool calls, before compaction and at the end of a turn, with their last runs"},
			f.lsp.item(),
		}),
		newSection(sectionAppearance, []*widget.FormItem{
			{Text: "Theme", Widget: f.theme},
			{Text: "Notifications", Widget: f.notify,
				HintText: "a desktop notification while you look at another session or another window"},
		}),
	)
	f.ExtendBaseWidget(f)
	return f
}

// CreateRenderer implements fyne.Widget.
func (f *Form) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(f.form) }

// wrapHint moves a form item's hint into a label under its widget that
// wraps: a form's own hint line never wraps, so one long hint made the
// whole dialog wider than a 960-pixel window.
func wrapHint(it *widget.FormItem) {
	if it.HintText == "" {
		return
	}
	hint := &widget.Label{Text: it.HintText, Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance, SizeName: theme.SizeNameCaptionText}
	it.Widget = container.NewVBox(it.Widget, hint)
	it.HintText = ""
}

func labelled(s string, o fyne.CanvasObject) fyne.CanvasObject {
	return container.NewBorder(nil, &widget.Label{Text: s, Importance: widget.LowImportance, SizeName: theme.SizeNameCaptionText}, nil, nil, o)
}

// fillPrices shows the saved (or default) prices of the model typed.
func (f *Form) fillPrices() {
	p, ok := f.saved.PriceFor(strings.TrimSpace(f.model.Text))
	if !ok {
		f.hit.SetText("")
		f.miss.SetText("")
		f.compl.SetText("")
		return
	}
	f.hit.SetText(priceText(p.CacheHit))
	f.miss.SetText(priceText(p.CacheMiss))
	f.compl.SetText(priceText(p.Completion))
}

// values returns the settings the form describes, or an error naming the
// field to fix.
func (f *Form) values() (workbench.Settings, error) {
	s := f.saved
	s.Prices = map[string]workbench.Price{}
	for k, v := range f.saved.Prices {
		s.Prices[k] = v
	}
	s.BaseURL = strings.TrimSpace(f.baseURL.Text)
	s.Model = strings.TrimSpace(f.model.Text)
	if k := strings.TrimSpace(f.apiKey.Text); k != "" {
		s.APIKey = k
	} else if f.forgetKey.Checked {
		s.APIKey = ""
	}
	s.ContextWindow = 0
	if w := strings.TrimSpace(f.window.Text); w != "" {
		n, err := strconv.Atoi(strings.ReplaceAll(w, ",", ""))
		if err != nil || n < 1000 {
			return s, badField(f.window, "the context window %q is not a number of tokens; type something like 128000 or leave it empty", w)
		}
		s.ContextWindow = n
	}
	if s.Model != "" {
		var p workbench.Price
		var set int
		for _, fld := range []struct {
			e    *tw.EscEntry
			v    *float64
			name string
		}{{f.hit, &p.CacheHit, "cache hit"}, {f.miss, &p.CacheMiss, "cache miss"}, {f.compl, &p.Completion, "completion"}} {
			t := strings.TrimSpace(strings.TrimPrefix(fld.e.Text, "$"))
			if t == "" {
				continue
			}
			v, err := strconv.ParseFloat(t, 64)
			if err != nil || v < 0 {
				return s, badField(fld.e, "the %s price %q is not a number; type dollars per million tokens, like 0.28", fld.name, fld.e.Text)
			}
			*fld.v = v
			set++
		}
		if set > 0 {
			s.Prices[s.Model] = p
		} else {
			delete(s.Prices, s.Model)
		}
	}
	if len(s.Prices) == 0 {
		s.Prices = nil
	}
	s.Theme = themeValue(f.theme.Selected)
	s.Compaction = compactionValue(f.compactM.Selected)
	if s.Compaction == workbench.CompactionAuto {
		s.Compaction = "" // the default, stored as absent
	}
	s.CyclesOff, s.WarmUp = f.cyclesOff.Checked, f.warmUp.Checked
	s.NoNotifications, s.NoMemoryOnLeave = !f.notify.Checked, !f.memory.Checked
	f.cache.apply(&s)
	f.keep.apply(&s)
	f.vision.apply(&s)
	if err := f.profiles.apply(&s); err != nil {
		return s, fieldError{field: f.profiles.box, err: err}
	}
	if err := f.safety.apply(&s); err != nil {
		return s, err
	}
	s.CycleAt = 0
	if c := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f.cycleAt.Text), "%")); c != "" {
		v, err := strconv.ParseFloat(c, 64)
		if err != nil || v < 10 || v > 100 {
			return s, badField(f.cycleAt, "the cycle threshold %q is not a percentage between 10 and 100; type something like 75 or leave it empty", f.cycleAt.Text)
		}
		s.CycleAt = v / 100
	}
	if s.BaseURL != "" {
		if err := (workbench.Resolved{BaseURL: s.BaseURL}).Check(); err != nil {
			return s, badField(f.baseURL, "the base URL %q is not an http(s) URL; use something like https://api.deepseek.com/v1", s.BaseURL)
		}
	}
	return s, nil
}

// test pings the endpoint in the form off the UI goroutine.
func (f *Form) test() {
	s, err := f.values()
	if err != nil {
		msg := tw.UpperFirst(err.Error()) + "."
		f.result.SetText(msg)
		f.resultIsProblem = true
		f.say(msg)
		return
	}
	f.resultIsProblem = false
	r := f.h.Resolve(s)
	if err := r.Check(); err != nil {
		f.result.SetText("Type the base URL of your model server first.")
		return
	}
	f.testB.Disable()
	f.result.SetText("Testing " + r.BaseURL + " …")
	model := r.Model
	f.h.Work(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		d, err := workbench.Ping(ctx, s, r)
		msg := pingMessage(d, err, model)
		if err == nil {
			msg += windowNote(ctx, s, r)
		}
		return func() {
			f.testB.Enable()
			f.result.SetText(msg)
		}
	})
}

// pingMessage turns a connection test into one clear sentence.
func pingMessage(d time.Duration, err error, model string) string {
	if err == nil {
		return fmt.Sprintf("OK — %s answered in %s.", model, tw.Duration(d))
	}
	switch workbench.Classify(err) {
	case workbench.ProblemUnreachable:
		return "Unreachable: the host did not answer; check the base URL and your network."
	case workbench.ProblemUnauthorized:
		return "Rejected (401): the server refused the API key; check or replace the key."
	case workbench.ProblemUnknownModel:
		return fmt.Sprintf("Unknown model: the server does not serve %q; check the model name.", model)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "No answer within 20 s; the server may be overloaded or the URL wrong."
	}
	return "Failed: " + err.Error()
}

// windowNote says the context window the server serves the model with,
// where it says so itself (a local llama.cpp or vLLM server), and
// whether sessions take it; "" when it does not say.
func windowNote(ctx context.Context, s workbench.Settings, r workbench.Resolved) string {
	n, from, err := workbench.ServerWindow(ctx, s, r)
	if err != nil || n <= 0 {
		return ""
	}
	if r.ContextWindow > 0 {
		return fmt.Sprintf(" The server serves a context window of %s tokens (its %s); sessions use the %s set here.", text.Thousands(n), from, text.Thousands(r.ContextWindow))
	}
	return fmt.Sprintf(" The server serves a context window of %s tokens (its %s); sessions use it.", text.Thousands(n), from)
}

// Field names a field the dialog can open on.
type Field int

// The fields Open can put the focus in.
const (
	BaseURL Field = iota // the endpoint's base URL
	Model                // the model's name
	APIKey               // the API key
)

// Open shows the Settings dialog as the window's view and returns its
// form.
func Open(h Host) *Form {
	f := newForm(h)
	var dlg *dialog.CustomDialog
	save := &widget.Button{Text: "Save", Importance: widget.HighImportance, OnTapped: func() {
		if f.save() {
			dlg.Hide()
		}
	}}
	cancel := &widget.Button{Text: "Cancel", OnTapped: func() { dlg.Hide() }}
	dlg = dialog.NewCustomWithoutButtons("Settings", f, h.Window)
	dlg.SetButtons([]fyne.CanvasObject{cancel, save})
	dlg.Resize(dialogSize(h.Window.Canvas().Size()))
	h.Show(dlg)
	return f
}

// Focus puts the keyboard focus in the field fld.
func (f *Form) Focus(fld Field) {
	e := map[Field]fyne.Focusable{BaseURL: f.baseURL, Model: f.model, APIKey: f.apiKey}[fld]
	f.show(f.sections[0])
	f.h.Window.Canvas().Focus(e)
}

// save validates and stores the form; it reports whether it did.
func (f *Form) save() bool {
	s, err := f.values()
	if err != nil {
		// Said next to Save, under the fields (which do not move), with
		// the section of the field to fix shown.
		f.say(tw.UpperFirst(err.Error()) + ".")
		f.point(err)
		return false
	}
	f.say("")
	f.h.Apply(s)
	return true
}
