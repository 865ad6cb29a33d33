package lsp

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeTool writes an executable shell script name into dir.
func fakeTool(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The one list of servers Tally installs names default servers, each
// with its tool and pinned packages.
func TestInstallables(t *testing.T) {
	want := map[string]string{"gopls": "go", "pyright": "npm", "typescript-language-server": "npm"}
	got := Installables()
	if len(got) != len(want) {
		t.Fatalf("installables = %+v", got)
	}
	for _, i := range got {
		if want[i.Name] != i.Tool || i.Command == "" || i.Version() == "" || !strings.Contains(i.Packages[0], i.Name+"@") && i.Name != "gopls" {
			t.Errorf("installable %+v", i)
		}
	}
	if g, _ := LookupInstallable("gopls"); g.Packages[0] != "golang.org/x/tools/gopls@"+g.Version() || !strings.HasPrefix(g.Version(), "v") {
		t.Errorf("gopls = %+v", g)
	}
	if ts, _ := LookupInstallable("typescript-language-server"); len(ts.Packages) != 2 || !strings.HasPrefix(ts.Packages[1], "typescript@") || ts.MinNode != 20 {
		t.Errorf("typescript-language-server = %+v", ts)
	}
}

// A server is found on PATH, else in Tally's folder of servers, else in
// the .tools of the checkout the program was built in.
func TestFindLooksInTallysFolderAndTheCheckout(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	data := t.TempDir()
	t.Setenv("TALLY_DATA", data)
	t.Setenv("PATH", t.TempDir())
	gopls, pyright := Defaults()[0], Defaults()[1]
	if prog, why := Find(gopls); prog != "" || !strings.Contains(why, "is not on PATH or in "+filepath.Join(data, ServersFolder)) || !strings.Contains(why, "tally lsp install gopls") {
		t.Errorf("nothing installed: %q, %q", prog, why)
	}
	bin := filepath.Join(data, ServersFolder, "bin")
	fakeTool(t, bin, "gopls", "exit 0\n")
	if prog, why := Find(gopls); prog != filepath.Join(bin, "gopls") {
		t.Errorf("gopls in Tally's folder: %q, %q", prog, why)
	}
	npmBin := filepath.Join(data, ServersFolder, "npm", "node_modules", ".bin")
	fakeTool(t, npmBin, "pyright-langserver", "exit 0\n")
	if prog, why := Find(pyright); prog != filepath.Join(npmBin, "pyright-langserver") {
		t.Errorf("pyright in Tally's folder: %q, %q", prog, why)
	}
	// One on PATH comes first.
	onPath := t.TempDir()
	fakeTool(t, onPath, "gopls", "exit 0\n")
	t.Setenv("PATH", onPath)
	if prog, _ := Find(gopls); prog != filepath.Join(onPath, "gopls") {
		t.Errorf("gopls on PATH: %q", prog)
	}

	// A manager finds it the same way.
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.py": "x = 1\n"})
	m := acquire(t, ws, Options{Servers: []ServerConfig{pyright}, Env: []string{"PATH=/nonexistent"}})
	if st := m.Status()[0]; st.State == StateNotInstalled || st.Command != filepath.Join(npmBin, "pyright-langserver") {
		t.Errorf("the manager's status %+v", st)
	}

	// The checkout of Tally's source a program was built in.
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{"go.mod": "module github.com/tally-dev/tally\n\ngo 1.26\n", "tally": ""})
	if got := checkoutTools(filepath.Join(repo, "tally")); got != "" {
		t.Errorf("a checkout without .tools: %q", got)
	}
	fakeTool(t, filepath.Join(repo, ".tools", "npm", "node_modules", ".bin"), "typescript-language-server", "exit 0\n")
	tools := checkoutTools(filepath.Join(repo, "tally"))
	if tools != filepath.Join(repo, ".tools") {
		t.Fatalf("checkoutTools = %q", tools)
	}
	if prog, _ := lookup(Defaults()[2], "/nonexistent", layoutDirs(tools)); prog != filepath.Join(tools, "npm", "node_modules", ".bin", "typescript-language-server") {
		t.Errorf("typescript-language-server in the checkout: %q", prog)
	}
	other := t.TempDir()
	writeFiles(t, other, map[string]string{"go.mod": "module example.com/other\n", "bin/tally": "", ".tools/bin/gopls": ""})
	if got := checkoutTools(filepath.Join(other, "bin", "tally")); got != "" {
		t.Errorf("another module's .tools: %q", got)
	}
}

// Install runs `go install` with GOBIN in Tally's folder, or `npm
// install --prefix`, with the pinned versions, and says what the program
// it put in place is.
func TestInstallRunsGoAndNPM(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	tools := t.TempDir()
	log := filepath.Join(t.TempDir(), "args")
	fakeTool(t, tools, "go", `echo "go $* GOBIN=$GOBIN pwd=$(pwd)" >> `+log+`
mkdir -p "$GOBIN" && printf '#!/bin/sh\n' > "$GOBIN/gopls" && chmod +x "$GOBIN/gopls"
`)
	fakeTool(t, tools, "npm", `echo "npm $*" >> `+log+`
mkdir -p "$3/node_modules/.bin"
for p in pyright-langserver typescript-language-server; do printf '#!/bin/sh\n' > "$3/node_modules/.bin/$p"; chmod +x "$3/node_modules/.bin/$p"; done
`)
	fakeTool(t, tools, "node", "echo v22.3.0\n")
	dir := filepath.Join(t.TempDir(), "servers")
	env := []string{"PATH=" + tools + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
	for _, name := range []string{"gopls", "pyright", "typescript-language-server"} {
		it, _ := LookupInstallable(name)
		got, err := Install(context.Background(), name, InstallOptions{Dir: dir, Env: env})
		if err != nil {
			t.Fatalf("install %s: %v", name, err)
		}
		if got.Name != name || got.Version != it.Version() || got.Program != filepath.Join(it.programDir(dir), it.Command) {
			t.Errorf("install %s = %+v", name, got)
		}
	}
	data, _ := os.ReadFile(log)
	g, _ := LookupInstallable("gopls")
	p, _ := LookupInstallable("pyright")
	ts, _ := LookupInstallable("typescript-language-server")
	want := "go install " + g.Packages[0] + " GOBIN=" + filepath.Join(dir, "bin") + " pwd=" + dir + "\n" +
		"npm install --prefix " + filepath.Join(dir, "npm") + " --no-audit --no-fund " + p.Packages[0] + "\n" +
		"npm install --prefix " + filepath.Join(dir, "npm") + " --no-audit --no-fund " + strings.Join(ts.Packages, " ") + "\n"
	if string(data) != want {
		t.Errorf("ran\n%s\nwant\n%s", data, want)
	}
}

// Without go or npm, or with too old a Node.js, or when the tool fails,
// Install says what to do.
func TestInstallSaysWhatToDo(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	empty := t.TempDir()
	dir := t.TempDir()
	g, _ := LookupInstallable("gopls")
	p, _ := LookupInstallable("pyright")
	install := func(name string, path string) error {
		_, err := Install(context.Background(), name, InstallOptions{Dir: dir, Env: []string{"PATH=" + path}})
		return err
	}
	for _, c := range []struct{ name, want string }{
		{"gopls", "installing gopls " + g.Version() + " needs Go, and go is not on PATH; install Go from https://go.dev/dl"},
		{"pyright", "installing pyright " + p.Version() + " needs npm, and npm is not on PATH; install Node.js with npm from https://nodejs.org"},
		{"clangd", `the language server "clangd" is not one Tally installs; name one of gopls, pyright, typescript-language-server`},
	} {
		if err := install(c.name, empty); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	old := t.TempDir()
	fakeTool(t, old, "npm", "exit 0\n")
	if err := install("typescript-language-server", old); err == nil || !strings.Contains(err.Error(), "needs Node.js 20 or newer, and node is not on PATH") {
		t.Errorf("without node: %v", err)
	}
	fakeTool(t, old, "node", "echo v18.19.1\n")
	if err := install("typescript-language-server", old); err == nil || !strings.Contains(err.Error(), "needs Node.js 20 or newer, and node is v18.19.1; install Node.js 20 or newer") {
		t.Errorf("an old node: %v", err)
	}
	if err := install("pyright", old); err == nil || !strings.Contains(err.Error(), "finished but left no pyright-langserver") {
		t.Errorf("npm that installs nothing: %v", err)
	}
	failing := t.TempDir()
	fakeTool(t, failing, "go", "echo 'downloading...'; echo 'go: no network' >&2; exit 1\n")
	err := install("gopls", failing)
	if err == nil || !strings.Contains(err.Error(), "`go install "+g.Packages[0]+"` failed (exit status 1: go: no network); fix what it says") {
		t.Errorf("a failing go: %v", err)
	}
}

// scripts/deps.sh installs the versions of versions.txt, read from the
// file rather than written out a second time.
func TestDepsScriptReadsTheVersions(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "scripts", "deps.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "engine/lsp/versions.txt") {
		t.Error("scripts/deps.sh does not read engine/lsp/versions.txt")
	}
	for _, i := range Installables() {
		for _, p := range i.Packages {
			if strings.Contains(string(data), p) {
				t.Errorf("scripts/deps.sh pins %s itself", p)
			}
		}
	}
}
