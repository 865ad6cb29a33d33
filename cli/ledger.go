package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tally-dev/tally/engine/ledger"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
)

// printLedger writes a session's per-request usage and totals: as a table,
// or as JSON with --json.
func printLedger(wb *workbench.Workbench, id string, asJSON bool, stdout io.Writer) error {
	rows, err := wb.Ledger(id)
	if err != nil {
		return err
	}
	// The model of the last request, or the session's own before any.
	var model string
	if len(rows) > 0 {
		model = rows[len(rows)-1].Model
	} else if info, err := wb.Session(id); err == nil {
		model = info.Model
	}
	prices := wb.Settings().PriceFor
	price, priced := prices(model)
	tot := ledger.Sum(rows, prices)
	if rows == nil {
		rows = []ledger.Row{} // [] in the JSON, not null
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Session string        `json:"session"`
			Price   *ledger.Price `json:"price"`
			Rows    []ledger.Row  `json:"rows"`
			Totals  ledger.Totals `json:"totals"`
		}{id, pricePtr(price, priced), rows, tot})
	}
	if len(rows) == 0 {
		fmt.Fprintf(stdout, "No requests yet: session %s has not sent the model anything, so there are no tokens or costs to show.\n", id)
		return nil
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "req\tprompt\thit\tmiss\tout\thit %\tcontext\tcost\tnote\t")
	for _, r := range rows {
		note := string(r.Kind)
		if r.Rebuild != "" {
			note += " after " + r.Rebuild
		}
		if r.Drift != nil {
			note += " " + r.Drift.String()
		}
		if r.Repin != "" {
			note += " after switching " + r.Repin
		}
		if r.Fallback != "" {
			note += " fell back " + safeText(r.Fallback)
		}
		if r.Effort != "" {
			note += " effort " + safeText(r.Effort)
		}
		fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%d\t%s\t%d\t%s\t%s\t\n", r.Request, r.PromptTokens, r.CacheHitTokens, r.CacheMissTokens,
			r.CompletionTokens, hitPct(r), r.ContextTokens, rowCost(r, prices), note)
	}
	w.Flush()
	fmt.Fprintf(stdout, "\n%d request%s · %d prompt tokens (%d hit, %d miss, %.2f%% hit) · %d completion tokens\n",
		tot.Requests, text.S(tot.Requests), tot.Prompt, tot.Hit, tot.Miss, 100*tot.HitRatio, tot.Completion)
	switch {
	case priced:
		fmt.Fprintf(stdout, "cost %s · without a prefix cache %s · saved %s\n", money(tot.Cost, true), money(tot.ZeroCacheCost, true), money(tot.ZeroCacheCost-tot.Cost, true))
	case model == "":
		fmt.Fprintln(stdout, "cost n/a: the requests name no model to price; set the model's price in the app's Settings")
	default:
		fmt.Fprintf(stdout, "cost n/a: no price is known for the model %s; set one in the app's Settings\n", safeText(model))
	}
	if tot.Drifts > 0 {
		fmt.Fprintf(stdout, "%d unbooked prefix change(s): each one made the following request miss the cache\n", tot.Drifts)
	}
	if n := len(rows); n > 0 && rows[n-1].CacheRule != "" {
		fmt.Fprintf(stdout, "estimates assume the provider caches %s\n", rows[n-1].CacheRule.Describe())
	}
	return nil
}

func pricePtr(p ledger.Price, ok bool) *ledger.Price {
	if !ok {
		return nil
	}
	return &p
}

func hitPct(r ledger.Row) string {
	if !r.CacheReported {
		return "–"
	}
	return fmt.Sprintf("%.1f", 100*r.HitRatio())
}

func money(v float64, priced bool) string {
	if !priced {
		return "n/a"
	}
	return fmt.Sprintf("$%.4f", v)
}

// rowCost is one request's cost, priced like the totals (ledger.Cost).
func rowCost(r ledger.Row, prices ledger.PriceBook) string {
	cost, _, ok := ledger.Cost([]ledger.Row{r}, prices)
	return money(cost, ok)
}
