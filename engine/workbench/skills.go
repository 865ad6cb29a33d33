package workbench

import (
	"fmt"
	"path/filepath"

	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/internal/trust"
)

// Skills returns the skills sessions created now in workspace ws would
// see: the user's and, once trusted, the workspace's (Catalog.Withheld
// counts those waiting for trust, Catalog.WorkspaceSkills lists them for
// review, Catalog.WorkspaceHash is what TrustSkills takes).
func (w *Workbench) Skills(ws string) (skill.Catalog, error) {
	abs, err := filepath.Abs(ws)
	if err != nil {
		return skill.Catalog{}, fmt.Errorf("workspace %q cannot be resolved (%w); pick the project folder", ws, err)
	}
	trusted, err := trust.Get(w.store, trust.Skills, abs)
	if err != nil {
		return skill.Catalog{}, err
	}
	return skill.Discover(userConfigDir(), abs, trusted), nil
}

// TrustSkills trusts the skills of workspace ws whose content has hash
// (the WorkspaceHash Skills returned, which the user reviewed): they are
// offered in sessions created from now on, until one of them changes.
// An empty hash withdraws the trust.
func (w *Workbench) TrustSkills(ws, hash string) error {
	if hash != "" {
		cat, err := w.Skills(ws)
		if err != nil {
			return err
		}
		switch {
		case len(cat.WorkspaceSkills) == 0:
			return fmt.Errorf("%s has no skills (in %v) to trust", ws, skill.WorkspaceDirs)
		case cat.WorkspaceHash != hash:
			return fmt.Errorf("the skills of %s changed since they were reviewed; review them again before trusting them", ws)
		}
	}
	return trust.Put(w.store, trust.Skills, ws, hash)
}
