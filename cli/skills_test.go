package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSkillsListTrustUntrust(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	data, ws := t.TempDir(), t.TempDir()
	for dir, body := range map[string]string{
		filepath.Join(cfg, "tally", "skills", "pdf"):   "---\nname: pdf\ndescription: Fill in PDF forms.\n---\nx",
		filepath.Join(ws, ".claude", "skills", "ship"): "---\nname: ship\ndescription: Ship a release.\n---\ny",
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runCLI(t, "skills", "--workspace", ws, "--data", data)
	if code != ExitOK || !strings.Contains(out, "pdf\tuser\tFill in PDF forms.") || !strings.Contains(out, "1 skill of the workspace waits for your trust: review it in .tally/skills, .agents/skills or .claude/skills, then `tally skills trust --workspace ") || strings.Contains(out, "ship\t") {
		t.Fatalf("list: exit %d, %q %q", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, "skills", "trust", "--workspace", ws, "--data", data); code != ExitOK || !strings.Contains(out, "ship\tShip a release.") {
		t.Fatalf("trust: exit %d, %q %q", code, out, errOut)
	}
	if out, _, _ := runCLI(t, "skills", "list", "--workspace", ws, "--data", data); !strings.Contains(out, "ship\tworkspace\tShip a release.") {
		t.Fatalf("after trust: %q", out)
	}
	if _, _, code := runCLI(t, "skills", "untrust", "--workspace", ws, "--data", data); code != ExitOK {
		t.Fatalf("untrust: exit %d", code)
	}
	if out, _, _ := runCLI(t, "skills", "--workspace", ws, "--data", data); strings.Contains(out, "ship\t") {
		t.Fatalf("after untrust: %q", out)
	}
}

// The count of skills waiting for trust agrees with its verb, and the
// folders to review are words, not a Go slice.
func TestSkillsWaitingForTrustReadAsASentence(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	data, ws := t.TempDir(), t.TempDir()
	for _, name := range []string{"ship", "lint"} {
		dir := filepath.Join(ws, ".tally", "skills", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: Do it.\n---\nx"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runCLI(t, "skills", "--workspace", ws, "--data", data)
	if code != ExitOK || !strings.Contains(out, "2 skills of the workspace wait for your trust: review them in .tally/skills, .agents/skills or .claude/skills, then") || strings.Contains(out, "[") {
		t.Errorf("exit %d, %q %q", code, out, errOut)
	}
	empty := t.TempDir()
	if _, errOut, code := runCLI(t, "skills", "trust", "--workspace", empty, "--data", data); code != ExitFail ||
		!strings.Contains(errOut, "has no skills in .tally/skills, .agents/skills or .claude/skills; add a folder with a SKILL.md") {
		t.Errorf("trust without skills: exit %d, %q", code, errOut)
	}
}
