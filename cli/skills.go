package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tally-dev/tally/engine/skill"
	"github.com/tally-dev/tally/internal/text"
)

// skillsUsage is the help of `tally skills`.
const skillsUsage = `usage:
  tally skills [list] [--workspace DIR] [--json]   the skills sessions created now would offer, and those waiting for trust
  tally skills trust [--workspace DIR]             offer the workspace's skills (.tally/skills, .agents/skills, .claude/skills)
  tally skills untrust [--workspace DIR]           stop offering them`

// cmdSkills runs `tally skills SUBCOMMAND`.
func cmdSkills(args []string, stdout, stderr io.Writer) error {
	c, err := parseWorkspaceCmd("skills", skillsUsage, args, stderr)
	if err != nil {
		return err
	}
	defer c.w.Close()
	sub, workspace, asJSON, w := c.sub, c.workspace, c.json, c.w
	cat, err := w.Skills(workspace)
	if err != nil {
		return err
	}
	switch sub {
	case "trust":
		if len(cat.WorkspaceSkills) == 0 {
			return fmt.Errorf("tally skills trust: %s has no skills in %s; add a folder with a SKILL.md to one of them", safeText(workspace), folderList(skill.WorkspaceDirs))
		}
		if err := w.TrustSkills(workspace, cat.WorkspaceHash); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "trusted the %s of %s; sessions created from now on offer them:\n", text.Plural(len(cat.WorkspaceSkills), "skill"), safeText(workspace))
		for _, s := range cat.WorkspaceSkills {
			fmt.Fprintf(stdout, "  %s\t%s\n", s.Name, safeText(text.FirstLine(s.Description, 100)))
		}
		return nil
	case "untrust":
		if err := w.TrustSkills(workspace, ""); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "the skills of %s are no longer offered\n", safeText(workspace))
		return nil
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(cat)
	}
	if len(cat.Skills) == 0 && cat.Withheld == 0 {
		fmt.Fprintln(stdout, "no skills; add a folder with a SKILL.md under ~/.config/tally/skills or the workspace's .tally/skills")
	}
	for _, s := range cat.Skills {
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", s.Name, s.Source, safeText(text.FirstLine(s.Description, 100)))
	}
	if cat.Withheld > 0 {
		verb, them := "wait", "them"
		if cat.Withheld == 1 {
			verb, them = "waits", "it"
		}
		fmt.Fprintf(stdout, "%s of the workspace %s for your trust: review %s in %s, then `tally skills trust --workspace %s`\n",
			text.Plural(cat.Withheld, "skill"), verb, them, folderList(skill.WorkspaceDirs), safeText(workspace))
	}
	for _, n := range cat.Notes {
		fmt.Fprintf(stdout, "note: %s\n", safeText(n))
	}
	return nil
}

// folderList writes folders as words: "a", "a or b", "a, b or c".
func folderList(folders []string) string {
	if len(folders) < 2 {
		return strings.Join(folders, "")
	}
	return strings.Join(folders[:len(folders)-1], ", ") + " or " + folders[len(folders)-1]
}
