package ui

import (
	"os"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/tally-dev/tally/engine/lsp"
)

// lspSettings opens Settings on a fresh config folder, waits for its
// language servers and returns it with the user's lsp.json path.
func lspSettings(t *testing.T) (*harness, *settingsForm, string) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h := newHarness(t, map[string]string{})
	f := h.ui.openSettings()
	h.waitFor("the language servers", func() bool { return len(f.lsp.rows.Objects) > 1 && !f.lsp.add.Disabled() })
	path, err := lsp.UserPath()
	if err != nil {
		t.Fatal(err)
	}
	return h, f, path
}

// lspRow is the section's row of the server name, or nil.
func lspRow(f *settingsForm, name string) fyne.CanvasObject {
	for _, r := range f.lsp.rows.Objects {
		if rows := rowTexts(&fyne.Container{Objects: []fyne.CanvasObject{r}}); len(rows) == 1 && strings.HasPrefix(rows[0], name+"|") {
			return r
		}
	}
	return nil
}

// hasRow reports whether the section lists the row "name|handles|state".
func hasRow(f *settingsForm, want string) bool {
	return slices.ContainsFunc(rowTexts(f.lsp.rows), func(r string) bool { return strings.HasPrefix(r, want) })
}

// Add server… opens a form; Enter saves the server to lsp.json, closes
// the form and lists the server.
func TestSettingsAddsALanguageServer(t *testing.T) {
	h, f, path := lspSettings(t)
	test.Tap(f.lsp.add)
	name := entryWith(h, "zls")
	if name == nil {
		t.Fatal("Add server… opened no form")
	}
	test.Type(name, "zls")
	test.Type(entryWith(h, "zls, or /path/to/server"), "no-such-zls")
	test.Type(entryWith(h, "--stdio (separated by spaces)"), "--stdio --verbose")
	test.Type(entryWith(h, "zig (optional)"), "zig")
	test.Type(entryWith(h, `{"key": "value"} (optional)`), `{"enable_snippets": true}`)
	exts := entryWith(h, ".zig, .zon")
	test.Type(exts, ".zig, .zon")
	exts.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	h.waitFor("the new server listed", func() bool { return hasRow(f, "zls|zig|not installed") })
	if entryWith(h, ".zig, .zon") != nil {
		t.Error("the form is still open after saving")
	}
	servers, err := lsp.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(servers, func(s lsp.ServerConfig) bool { return s.Name == "zls" })
	if i < 0 {
		t.Fatalf("zls is not in %s", path)
	}
	if z := servers[i]; z.Command != "no-such-zls" || !slices.Equal(z.Args, []string{"--stdio", "--verbose"}) ||
		!slices.Equal(z.Extensions, []string{".zig", ".zon"}) || !slices.Equal(z.Languages, []string{"zig"}) || !strings.Contains(string(z.InitOptions), "enable_snippets") {
		t.Errorf("saved %+v", z)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file %v, %v", fi, err)
	}
	if !f.lsp.changed.Visible() || f.lsp.changed.Text != "Saved zls." {
		t.Errorf("the change line %q", f.lsp.changed.Text)
	}
	if buttonIn(lspRow(f, "zls"), "Remove") == nil || buttonIn(lspRow(f, "zls"), "Edit…") == nil {
		t.Error("the added server has no Remove or Edit… button")
	}
	test.Tap(buttonIn(lspRow(f, "zls"), "Remove"))
	h.waitFor("zls removed", func() bool { return lspRow(f, "zls") == nil })
}

// A bad form keeps the dialog open, saying what is wrong under it, and
// writes nothing.
func TestSettingsLanguageServerFormSaysWhatIsWrong(t *testing.T) {
	h, f, path := lspSettings(t)
	test.Tap(f.lsp.add)
	name := entryWith(h, "zls")
	test.Type(name, "zls")
	name.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if entryWith(h, "zls") == nil || !h.overlayShows("has no command") {
		t.Fatal("a server without a command closed the form or was not explained")
	}
	test.Type(entryWith(h, "zls, or /path/to/server"), "zls")
	test.Type(entryWith(h, ".zig, .zon"), "zig")
	test.Type(entryWith(h, `{"key": "value"} (optional)`), `{"a":`)
	test.Tap(buttonIn(h.win.Canvas().Overlays().Top(), "Save"))
	if !h.overlayShows(`extension "zig"`) {
		t.Error("an extension without its dot was not explained")
	}
	ext := entryWith(h, ".zig, .zon")
	ext.SetText(".zig")
	ext.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if entryWith(h, "zls") == nil || !h.overlayShows("not valid JSON") {
		t.Error("bad init options closed the form or were not explained")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a bad form wrote %s: %v", path, err)
	}
	if name.Text != "zls" {
		t.Errorf("the name was lost: %q", name.Text)
	}
}

// Disable on a built-in server marks it disabled in the list and the
// file; Enable brings it back and drops the entry.
func TestSettingsDisablesABuiltInLanguageServer(t *testing.T) {
	h, f, path := lspSettings(t)
	row := lspRow(f, "clangd")
	if row == nil || buttonIn(row, "Remove") != nil || buttonIn(row, "Edit…") == nil {
		t.Fatal("the built-in clangd has no row, no Edit… or a Remove button")
	}
	test.Tap(buttonIn(row, "Disable"))
	h.waitFor("clangd disabled", func() bool { return hasRow(f, "clangd|c, cpp|disabled") })
	if got := lspRow(f, "clangd"); buttonIn(got, "Enable") == nil {
		t.Error("the disabled clangd has no Enable button")
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), `"disabled": true`) {
		t.Fatalf("%s: %s, %v", path, data, err)
	}
	servers, err := lsp.LoadConfig(path)
	if err != nil || slices.ContainsFunc(servers, func(s lsp.ServerConfig) bool { return s.Name == "clangd" }) {
		t.Errorf("clangd is still configured: %v", err)
	}
	test.Tap(buttonIn(lspRow(f, "clangd"), "Enable"))
	h.waitFor("clangd enabled", func() bool { return lspRow(f, "clangd") != nil && buttonIn(lspRow(f, "clangd"), "Disable") != nil })
	if data, _ := os.ReadFile(path); strings.Contains(string(data), "clangd") {
		t.Errorf("enabling left the entry: %s", data)
	}
}
