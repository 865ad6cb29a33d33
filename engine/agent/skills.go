package agent

import (
	_ "embed"

	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/internal/trust"
)

// Agent Skills in a session (package skill): the names and descriptions
// of the skills found when the session was created are a section of its
// system prompt, stored with it, so reopening the session or adding a
// skill later never moves the prefix. The skill tool, offered when that
// section is not empty, loads a skill's body and files on demand. A skill
// added while the session lives is named in the status block's alerts
// (an append at the tail) and loads the same way.

// discoverSkills finds the skills a session in workspace abs sees now.
func discoverSkills(cfg Config, abs string) skill.Catalog {
	trustedHash, _ := trust.Get(cfg.Store, trust.Skills, abs) // unreadable trust: the workspace's skills stay out
	return skill.Discover(cfg.UserConfigDir, abs, trustedHash)
}
