package settings

import (
	"fmt"
	"strconv"

	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
)

// keepFields is the "Keep the context under" setting: Auto (the level that
// costs least at the model's prices), the window's default, or a fixed
// level, each labelled with its forecast input cost for the open session.
type keepFields struct {
	sel *widget.Select
	// values are the Settings.KeepUnder values of the choices, by label.
	values map[string]string
	// requests is the number of requests the forecasts are for, 0 when
	// there is no open session to forecast.
	requests int
}

// keepTokens names a level in tokens: 64K, or 65,536.
func keepTokens(n int) string {
	if n%1_000 == 0 {
		return strconv.Itoa(n/1_000) + "K"
	}
	return text.Thousands(n)
}

// newKeepFields builds the choices, forecast by forecast (nil: no
// session open, no forecast) with prices hitPrice per million cached
// tokens (0: unknown, the forecast is then in hit-priced tokens).
func newKeepFields(s workbench.Settings, forecast func() []rewrite.KeepOption, hitPrice float64) keepFields {
	f := keepFields{values: map[string]string{}}
	var opts []rewrite.KeepOption
	if forecast != nil {
		opts = forecast()
	} else {
		opts = []rewrite.KeepOption{{KeepUnder: rewrite.KeepAuto}, {KeepUnder: 0}}
		for _, k := range rewrite.KeepChoices {
			opts = append(opts, rewrite.KeepOption{KeepUnder: k})
		}
	}
	saved, err := workbench.ParseKeepUnder(s.KeepUnder)
	if err != nil {
		saved = rewrite.KeepAuto
	}
	var labels []string
	selected := ""
	for _, o := range opts {
		label, value := keepChoice(o, forecast != nil, hitPrice)
		labels = append(labels, label)
		f.values[label] = value
		if o.KeepUnder == saved {
			selected = label
		}
		f.requests = o.Cost.Requests
	}
	if selected == "" {
		// A level set by hand (config key or flag) that is no choice here.
		selected = keepTokens(saved)
		labels = append(labels, selected)
		f.values[selected] = strconv.Itoa(saved)
	}
	f.sel = widget.NewSelect(labels, nil)
	f.sel.SetSelected(selected)
	if forecast == nil {
		f.requests = 0
	}
	return f
}

// keepChoice is the label and the stored value of one option.
func keepChoice(o rewrite.KeepOption, forecast bool, hitPrice float64) (label, value string) {
	switch o.KeepUnder {
	case rewrite.KeepAuto:
		label, value = "Auto", ""
		if forecast {
			label = fmt.Sprintf("Auto (%s now)", text.Thousands(o.Level))
		}
	case 0:
		label, value = "The window's default", workbench.KeepUnderWindow
		if forecast {
			label = fmt.Sprintf("The window's default (%s)", text.Thousands(o.Level))
		}
	default:
		label, value = keepTokens(o.KeepUnder)+" tokens", strconv.Itoa(o.KeepUnder)
	}
	if !forecast {
		return label, value
	}
	cost := fmt.Sprintf("%s hit-priced tokens", compactCount(o.Cost.Cost))
	if hitPrice > 0 {
		cost = fmt.Sprintf("$%.2f", o.Cost.Dollars(hitPrice))
	}
	n := "no compaction"
	if o.Cost.Compactions > 0 {
		n = text.Plural(o.Cost.Compactions, "compaction")
	}
	return fmt.Sprintf("%s — %s, %s", label, cost, n), value
}

// compactCount renders a large count as 12.3M or 450K.
func compactCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0fK", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// item is the form row.
func (f keepFields) item() *widget.FormItem {
	hint := "every request pays the cache-hit price for the whole context; a compaction costs once (the rebuilt context at the miss price). Auto picks the level that costs least at this model's prices"
	if f.requests > 0 {
		hint += "; forecast input cost of the open session's next " + text.Plural(f.requests, "request")
	} else {
		hint += "; open a session to see each choice's forecast cost"
	}
	return &widget.FormItem{Text: "Keep the context under", Widget: f.sel, HintText: hint}
}

// apply copies the choice into s.
func (f keepFields) apply(s *workbench.Settings) {
	s.KeepUnder = f.values[f.sel.Selected]
}

// newKeepFieldsFor builds the setting for h's session (if any) at the
// prices of its model, else of model.
func newKeepFieldsFor(h Host, model string) keepFields {
	var forecast func() []rewrite.KeepOption
	if h.Session != nil && h.Session.Forecast != nil {
		forecast, model = h.Session.Forecast, h.Session.Model
	}
	p, _ := h.Saved.PriceFor(model)
	return newKeepFields(h.Saved, forecast, p.CacheHit)
}
