package settings

import (
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/status"
	"github.com/tally-dev/tally/engine/workbench"
)

// cacheFields are the settings of how requests are laid out for the
// provider's prefix cache: the status placement and the cache rule the
// estimates assume. "Automatic" picks both from the endpoint.
type cacheFields struct {
	placement *widget.Select
	rule      *widget.Select
}

const automatic = "Automatic"

var (
	placementChoices = []string{automatic, string(status.OnChange), string(status.Tail), string(status.Append)}
	ruleChoices      = []string{automatic, string(ledger.RuleUnits), string(ledger.RuleBlocks)}
)

func newCacheFields(s workbench.Settings) cacheFields {
	f := cacheFields{placement: widget.NewSelect(placementChoices, nil), rule: widget.NewSelect(ruleChoices, nil)}
	f.placement.SetSelected(orAutomatic(s.StatusPlacement))
	f.rule.SetSelected(orAutomatic(s.CacheRule))
	return f
}

func orAutomatic(v string) string {
	if v == "" {
		return automatic
	}
	return v
}

// items are the form rows; baseURL names what Automatic resolves to.
func (f cacheFields) items(baseURL string) []*widget.FormItem {
	rule := ledger.RuleFor(baseURL)
	return []*widget.FormItem{
		{Text: "Cache rule", Widget: f.rule,
			HintText: "Automatic for this endpoint: " + string(rule) + " — " + rule.Describe()},
		{Text: "Status placement", Widget: f.placement,
			HintText: "Automatic for this endpoint: " + string(status.DefaultPlacement(rule == ledger.RuleUnits)) +
				" (measured cheapest under its cache rule; see the cache table in docs/compaction.md)"},
	}
}

// apply copies the fields into s.
func (f cacheFields) apply(s *workbench.Settings) {
	s.StatusPlacement, s.CacheRule = "", ""
	if v := f.placement.Selected; v != automatic {
		s.StatusPlacement = v
	}
	if v := f.rule.Selected; v != automatic {
		s.CacheRule = v
	}
}
