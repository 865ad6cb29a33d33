package skill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t testing.TB, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDiscoverOrdersTrustsAndShadows(t *testing.T) {
	user, ws := t.TempDir(), t.TempDir()
	write(t, user, "skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Fill in PDF forms.\nallowed-tools: Read, Bash\n---\nUse pdftk.\n")
	write(t, user, "skills/zeta/SKILL.md", "---\ndescription: |\n  Last one,\n  on two lines.\n---\nz\n")
	write(t, ws, ".claude/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy the site.\n---\nRun make deploy.\n")
	write(t, ws, ".tally/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: The workspace's pdf.\n---\n")
	write(t, ws, ".agents/skills/broken/SKILL.md", "---\nname: [x\n---\n")
	write(t, ws, ".agents/skills/NoDesc/SKILL.md", "---\nname: nodesc\n---\n")

	c := Discover(user, ws, "")
	if got := strings.Join(c.Names(), ","); got != "pdf,zeta" || c.Withheld != 2 {
		t.Fatalf("untrusted: names %s, withheld %d", got, c.Withheld)
	}
	if c.WorkspaceHash == "" || len(c.WorkspaceSkills) != 2 {
		t.Fatalf("workspace skills %+v hash %q", c.WorkspaceSkills, c.WorkspaceHash)
	}
	if len(c.Notes) != 2 || !strings.Contains(strings.Join(c.Notes, "\n"), "not valid YAML") || !strings.Contains(strings.Join(c.Notes, "\n"), "no description") {
		t.Fatalf("notes %q", c.Notes)
	}

	c = Discover(user, ws, c.WorkspaceHash)
	if got := strings.Join(c.Names(), ","); got != "deploy,pdf,zeta" || c.Withheld != 0 {
		t.Fatalf("trusted: names %s", got)
	}
	if s, _ := c.Find("pdf"); s.Source != SourceUser || strings.Join(s.AllowedTools, " ") != "Read Bash" {
		t.Fatalf("pdf = %+v, want the user's", s)
	}
	if s, _ := c.Find("zeta"); s.Description != "Last one, on two lines." {
		t.Fatalf("zeta description %q", s.Description)
	}
	want := "# Skills\n" + strings.SplitN(c.Section(), "\n", 3)[1] + "\n- deploy: Deploy the site.\n- pdf: Fill in PDF forms.\n- zeta: Last one, on two lines."
	if c.Section() != want {
		t.Fatalf("section:\n%s", c.Section())
	}
	if again := Discover(user, ws, c.WorkspaceHash); again.Section() != c.Section() {
		t.Fatal("the section is not stable")
	}

	write(t, ws, ".claude/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy somewhere else.\n---\n")
	if c2 := Discover(user, ws, c.WorkspaceHash); c2.Withheld != 2 {
		t.Fatal("a changed workspace skill kept its trust")
	}
}

func TestLoadAndReadFileStayInTheSkill(t *testing.T) {
	user := t.TempDir()
	write(t, user, "skills/pdf/SKILL.md", "---\nname: pdf\ndescription: PDFs.\n---\n\nSee reference.md.\n")
	write(t, user, "skills/pdf/reference.md", "the reference")
	write(t, user, "skills/pdf/scripts/fill.py", "print(1)")
	write(t, user, "secret.txt", "outside")
	if err := os.Symlink(filepath.Join(user, "secret.txt"), filepath.Join(user, "skills/pdf/link.txt")); err != nil {
		t.Fatal(err)
	}
	s, ok := Discover(user, "", "").Find("pdf")
	if !ok {
		t.Fatal("no skill")
	}
	l, err := Load(s)
	if err != nil || l.Body != "See reference.md." || strings.Join(l.Files, ",") != "reference.md,scripts/fill.py" {
		t.Fatalf("Load = %+v, %v", l, err)
	}
	if data, _, err := ReadFile(s, "reference.md"); err != nil || string(data) != "the reference" {
		t.Fatalf("ReadFile = %q, %v", data, err)
	}
	for _, bad := range []string{"../secret.txt", "/etc/passwd", "link.txt", "missing.md", ""} {
		if _, _, err := ReadFile(s, bad); err == nil {
			t.Errorf("ReadFile(%q) read outside the skill", bad)
		}
	}
}
