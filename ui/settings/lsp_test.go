package settings

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/lsp"
	"github.com/tally-dev/tally/ui/internal/fynetest"
)

// lspSettings opens Settings on a fresh config folder, waits for its
// language servers and returns it with the user's lsp.json path.
func lspSettings(t *testing.T) (*harness, *Form, string) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	h := newHarness(t, nil)
	f := h.open()
	h.waitFor("the language servers", func() bool { return len(f.lsp.rows.Objects) > 1 && !f.lsp.add.Disabled() })
	path, err := lsp.UserPath()
	if err != nil {
		t.Fatal(err)
	}
	return h, f, path
}

// Add server… opens a form; Enter saves the server to lsp.json, closes
// the form and lists the server.
func TestSettingsAddsALanguageServer(t *testing.T) {
	h, f, path := lspSettings(t)
	test.Tap(f.lsp.add)
	name := h.entryWith("zls")
	if name == nil {
		t.Fatal("Add server… opened no form")
	}
	test.Type(name, "zls")
	test.Type(h.entryWith("zls, or /path/to/server"), "no-such-zls")
	test.Type(h.entryWith("--stdio (separated by spaces)"), "--stdio --verbose")
	test.Type(h.entryWith("zig (optional)"), "zig")
	test.Type(h.entryWith(`{"key": "value"} (optional)`), `{"enable_snippets": true}`)
	exts := h.entryWith(".zig, .zon")
	test.Type(exts, ".zig, .zon")
	exts.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	h.waitFor("the new server listed", func() bool { return hasRow(f, "zls|zig|not installed") })
	if h.entryWith(".zig, .zon") != nil {
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
	name := h.entryWith("zls")
	test.Type(name, "zls")
	name.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if h.entryWith("zls") == nil || !h.overlayShows("has no command") {
		t.Fatal("a server without a command closed the form or was not explained")
	}
	test.Type(h.entryWith("zls, or /path/to/server"), "zls")
	test.Type(h.entryWith(".zig, .zon"), "zig")
	test.Type(h.entryWith(`{"key": "value"} (optional)`), `{"a":`)
	test.Tap(buttonIn(h.win.Canvas().Overlays().Top(), "Save"))
	if !h.overlayShows(`extension "zig"`) {
		t.Error("an extension without its dot was not explained")
	}
	ext := h.entryWith(".zig, .zon")
	ext.SetText(".zig")
	ext.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if h.entryWith("zls") == nil || !h.overlayShows("not valid JSON") {
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

// Without a session, Settings lists the configured servers from the
// user's file over the built-in ones, the disabled ones last, and says
// where they are kept.
func TestSettingsListsConfiguredLanguageServers(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	writeLSPConfig(t, cfg, map[string]any{"servers": map[string]any{
		"clangd":  map[string]any{"disabled": true},
		"zigls":   map[string]any{"command": "no-such-zig-server", "extensions": []string{".zig"}, "languages": []string{"zig"}},
		"mytools": map[string]any{"command": os.Args[0], "extensions": []string{".my"}},
	}})
	h := newHarness(t, nil)
	f := h.open()
	h.waitFor("the language servers", func() bool { return len(f.lsp.rows.Objects) > 1 })
	rows := rowTexts(f.lsp.rows)
	for _, want := range []string{"gopls|go|", `zigls|zig|not installed — no-such-zig-server (the language server "zigls") is not on PATH or in `, "mytools|.my|not started yet", "clangd|c, cpp|disabled"} {
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, want) }) {
			t.Errorf("no row %q in %q", want, rows)
		}
	}
	if i := slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, "clangd") }); i != len(rows)-1 {
		t.Errorf("the disabled clangd is not listed last: %q", rows)
	}
	path, _ := lsp.UserPath()
	for _, want := range []string{path, `"command"`, `"args"`, `"extensions"`, `"languages"`, `"init_options"`, `"disabled"`} {
		if !strings.Contains(f.lsp.where.Text, want) {
			t.Errorf("the file line %q does not name %s", f.lsp.where.Text, want)
		}
	}
	if len(f.lsp.logs) != 0 {
		t.Errorf("servers that never ran have Open log buttons: %v", f.lsp.logs)
	}
}

// A broken lsp.json is said in the section, which lists the built-in
// servers the sessions then use.
func TestSettingsSaysTheLanguageServerFileIsBroken(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	writeLSPConfig(t, cfg, map[string]any{"servers": map[string]any{"x": map[string]any{"comand": "typo"}}})
	h := newHarness(t, nil)
	f := h.open()
	h.waitFor("the language servers", func() bool { return len(f.lsp.rows.Objects) > 1 })
	if !f.lsp.note.Visible() || !strings.Contains(f.lsp.note.Text, "is not valid") || !strings.Contains(f.lsp.note.Text, "built-in servers") {
		t.Errorf("note %q (visible %v)", f.lsp.note.Text, f.lsp.note.Visible())
	}
	if rows := rowTexts(f.lsp.rows); len(rows) != len(lsp.Defaults()) {
		t.Errorf("rows %q, want the %d built-in servers", rows, len(lsp.Defaults()))
	}
}

// The words of each state.
func TestLanguageServerStateWords(t *testing.T) {
	for _, c := range []struct {
		st            lsp.ServerStatus
		state, reason string
		imp           widget.Importance
	}{
		{lsp.ServerStatus{State: lsp.StateRunning}, "running", "", widget.SuccessImportance},
		{lsp.ServerStatus{State: lsp.StateStarting}, "starting", "", widget.MediumImportance},
		{lsp.ServerStatus{State: lsp.StateStopped, Reason: "not started yet; it starts when a file it handles is synced or queried"}, "not started yet", "", widget.LowImportance},
		{lsp.ServerStatus{State: lsp.StateStopped, Reason: "stopped by the last release"}, "not started yet", "stopped by the last release", widget.LowImportance},
		{lsp.ServerStatus{State: lsp.StateNotInstalled, Reason: "gopls is not on the PATH; install it."}, "not installed", "gopls is not on the PATH; install it", widget.WarningImportance},
		{lsp.ServerStatus{Name: "x", State: lsp.StateFailed, Reason: `the language server "x" crashed twice; see its log`}, "failed", "it crashed twice; see its log", widget.DangerImportance},
	} {
		if state, reason, imp := lspStateText(c.st); state != c.state || reason != c.reason || imp != c.imp {
			t.Errorf("%+v: %q, %q (%v), want %q, %q (%v)", c.st, state, reason, imp, c.state, c.reason, c.imp)
		}
	}
	if got := ServerReason(lsp.ServerStatus{Name: "x", Reason: `the language server "x" hung.`}); got != "it hung" {
		t.Errorf("ServerReason = %q", got)
	}
}

// A server Tally installs that is not installed has Install with its
// version; Install runs go install into Tally's folder of servers, where
// the list then finds it.
func TestSettingsInstallsALanguageServer(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	data, tools := t.TempDir(), t.TempDir()
	t.Setenv("TALLY_DATA", data)
	fake := "#!/bin/sh\n/bin/mkdir -p \"$GOBIN\" && echo '#!/bin/sh' > \"$GOBIN/gopls\" && /bin/chmod +x \"$GOBIN/gopls\"\n"
	if err := os.WriteFile(filepath.Join(tools, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", tools)
	h, f, _ := lspSettings(t)
	gopls, _ := lsp.LookupInstallable("gopls")
	pyright, _ := lsp.LookupInstallable("pyright")
	if !hasRow(f, "gopls|go|not installed") || buttonIn(lspRow(f, "pyright"), "Install "+pyright.Version()) == nil || anyInstall(lspRow(f, "clangd")) != nil {
		t.Fatalf("rows %q: gopls not installed, Install on pyright's row and none on clangd's", rowTexts(f.lsp.rows))
	}
	install := buttonIn(lspRow(f, "gopls"), "Install "+gopls.Version())
	if install == nil {
		t.Fatal("gopls has no Install button")
	}
	test.Tap(install)
	h.waitFor("gopls installed", func() bool { return hasRow(f, "gopls|go|not started yet") })
	program := filepath.Join(data, lsp.ServersFolder, "bin", "gopls")
	if want := "Installed gopls " + gopls.Version() + " (" + program + "); new sessions use it."; f.lsp.changed.Text != want {
		t.Errorf("the change line %q, want %q", f.lsp.changed.Text, want)
	}
	if anyInstall(lspRow(f, "gopls")) != nil {
		t.Error("the installed gopls still has Install")
	}
	test.Tap(buttonIn(lspRow(f, "pyright"), "Install "+pyright.Version()))
	h.waitFor("npm missing said", func() bool { return f.lsp.changed.Importance == widget.DangerImportance })
	if !strings.Contains(f.lsp.changed.Text, "needs npm, and npm is not on PATH; install Node.js with npm") {
		t.Errorf("without npm: %q", f.lsp.changed.Text)
	}
}

// anyInstall is the Install button of a row, whatever its version, or nil.
func anyInstall(row fyne.CanvasObject) *widget.Button {
	return fynetest.Find(row, func(b *widget.Button) bool { return strings.HasPrefix(b.Text, "Install") })
}
