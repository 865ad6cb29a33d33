package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/lsp"
)

// lspGopls returns gopls as scripts/deps.sh installs it, skipping the
// test without it.
func lspGopls(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", ".tools", "bin", "gopls"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skip("gopls is not installed in .tools; run `bash scripts/deps.sh` to install it")
	}
	return p
}

// lspWorkspace makes a Go module whose main.go has a type error on line
// 4, and a user lsp.json that runs gopls from .tools.
func lspWorkspace(t *testing.T) string {
	gopls := lspGopls(t)
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	conf, _ := json.Marshal(map[string]any{"servers": map[string]any{
		"gopls": map[string]any{"command": gopls, "extensions": []string{".go"}, "languages": []string{"go"}},
	}})
	if err := os.MkdirAll(filepath.Join(cfg, "tally"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "tally", "lsp.json"), conf, 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":  "module example.com/demo\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {\n\tvar x int = \"s\"\n\t_ = x\n}\n",
		"ok.go":   "package main\n\nfunc ok() int { return 1 }\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func TestLSPDiagnostics(t *testing.T) {
	ws := lspWorkspace(t)
	var out, errOut bytes.Buffer
	code := Main([]string{"lsp", "diagnostics", "main.go", "--workspace", ws}, nil, &out, &errOut)
	if code != ExitFail || !strings.HasPrefix(out.String(), "main.go:4:14: error: cannot use \"s\"") || !strings.Contains(errOut.String(), "1 error in main.go") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := Main([]string{"lsp", "diagnostics", "--workspace", ws, filepath.Join(ws, "ok.go")}, nil, &out, &errOut); code != ExitOK || out.Len() != 0 {
		t.Errorf("a clean file: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	if code := Main([]string{"lsp", "diagnostics", "--workspace", ws, "missing.go"}, nil, &out, &errOut); code != ExitFail || !strings.Contains(errOut.String(), "does not exist") {
		t.Errorf("a missing file: exit %d, stderr %q", code, errOut.String())
	}
	if code := Main([]string{"lsp", "diagnostics"}, nil, &out, &errOut); code != ExitUsage {
		t.Errorf("no file: exit %d", code)
	}
}

func TestLSPStatus(t *testing.T) {
	ws := lspWorkspace(t)
	var out, errOut bytes.Buffer
	if code := Main([]string{"lsp", "status", "--workspace", ws}, nil, &out, &errOut); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "gopls") || !strings.Contains(lines[0], " running ") {
		t.Errorf("status:\n%s", out.String())
	}
	out.Reset()
	if code := Main([]string{"lsp", "status", "--json", "--workspace", ws}, nil, &out, &errOut); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(out.String(), "\n", 2)[0]), &first); err != nil || first["name"] != "gopls" || first["state"] != "running" {
		t.Errorf("json status %q (%v)", out.String(), err)
	}
}

// `tally lsp install gopls` runs go install of the pinned gopls into
// Tally's folder of servers and says the version and the program; `tally
// lsp status` then finds it there. Without a name it lists what it
// installs; without go it says what to do.
func TestLSPInstall(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	data, tools := t.TempDir(), t.TempDir()
	t.Setenv("TALLY_DATA", data)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	args := filepath.Join(t.TempDir(), "args")
	fake := "#!/bin/sh\necho \"$* GOBIN=$GOBIN\" > " + args + "\n/bin/mkdir -p \"$GOBIN\" && echo '#!/bin/sh' > \"$GOBIN/gopls\" && /bin/chmod +x \"$GOBIN/gopls\"\n"
	if err := os.WriteFile(filepath.Join(tools, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", tools)
	gopls, _ := lsp.LookupInstallable("gopls")
	dir := filepath.Join(data, lsp.ServersFolder)
	out, errOut, code := runCLI(t, "lsp", "install", "gopls")
	if code != ExitOK || out != "installed gopls "+gopls.Version()+": "+filepath.Join(dir, "bin", "gopls")+"\n" ||
		!strings.Contains(errOut, "Installing gopls "+gopls.Version()+" into "+dir+": go install "+gopls.Packages[0]) {
		t.Fatalf("install: exit %d, %q %q", code, out, errOut)
	}
	if got, _ := os.ReadFile(args); string(got) != "install "+gopls.Packages[0]+" GOBIN="+filepath.Join(dir, "bin")+"\n" {
		t.Errorf("go ran with %q", got)
	}
	out, errOut, code = runCLI(t, "lsp", "status", "--workspace", t.TempDir())
	if code != ExitOK || !strings.Contains(out, "gopls ") || strings.Contains(strings.SplitN(out, "\n", 2)[0], "not-installed") {
		t.Errorf("status after the install: exit %d, %q %q", code, out, errOut)
	}

	_, errOut, code = runCLI(t, "lsp", "install")
	if code != ExitUsage || !strings.Contains(errOut, "name the server to install: gopls "+gopls.Version()+" (with go), pyright ") ||
		!strings.Contains(errOut, "\n  tally lsp install NAME...") {
		t.Errorf("no name: exit %d, %q", code, errOut)
	}
	if _, errOut, code = runCLI(t, "lsp", "install", "clangd"); code != ExitUsage || !strings.Contains(errOut, `"clangd" is not a server Tally installs`) {
		t.Errorf("clangd: exit %d, %q", code, errOut)
	}
	t.Setenv("PATH", t.TempDir())
	if _, errOut, code = runCLI(t, "lsp", "install", "gopls"); code != ExitFail || !strings.Contains(errOut, "needs Go, and go is not on PATH; install Go from https://go.dev/dl") {
		t.Errorf("without go: exit %d, %q", code, errOut)
	}
}
