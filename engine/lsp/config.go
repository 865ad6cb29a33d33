package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/tally-dev/tally/internal/safefile"
	"github.com/tally-dev/tally/internal/userconfig"
)

// FileName is the name of the user's language-server file in Tally's
// folder of the user config directory.
const FileName = "lsp.json"

// maxConfigSize bounds the size of a configuration file that is read.
const maxConfigSize = 1 << 20

// serverNameRE is what a server's name may be: it names its log file.
var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ServerConfig describes one language server: the program to run over
// stdio and the files it handles.
type ServerConfig struct {
	// Name identifies the server in the configuration, in statuses and as
	// the base name of its log file.
	Name string
	// Command is the program: a name looked up on the PATH of the
	// server's environment (with the workspace's folders removed from it)
	// or an absolute path ("~/" is expanded). A server whose command is
	// not found is [StateNotInstalled] and never started.
	Command string
	// Args are the program's arguments, such as "--stdio".
	Args []string
	// Languages are the LSP language identifiers the server handles
	// ("go", "typescriptreact"); the one sent for a file is chosen by its
	// extension (see [LanguageID]).
	Languages []string
	// Extensions are the file name endings the server handles, each with
	// its dot (".go"); they are matched case-sensitively.
	Extensions []string
	// InitOptions is sent as the initialize request's
	// initializationOptions; nil sends none.
	InitOptions json.RawMessage
	// Env holds extra "NAME=value" entries added to the server's
	// environment, replacing inherited ones of the same name.
	Env []string
}

// handles reports whether the server handles the file at path.
func (c *ServerConfig) handles(path string) bool {
	return slices.ContainsFunc(c.Extensions, func(ext string) bool { return strings.HasSuffix(path, ext) })
}

// languageFor is the language identifier sent for the file at path.
func (c *ServerConfig) languageFor(path string) string {
	if id := LanguageID(path); id != "" && (len(c.Languages) == 0 || slices.Contains(c.Languages, id)) {
		return id
	}
	if len(c.Languages) > 0 {
		return c.Languages[0]
	}
	return strings.TrimPrefix(filepath.Ext(path), ".")
}

// languageIDs maps file extensions to the language identifiers of the
// LSP specification.
var languageIDs = map[string]string{
	".go": "go", ".py": "python", ".pyi": "python",
	".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
	".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
	".rs": "rust", ".c": "c", ".h": "c",
	".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp",
	".java": "java", ".rb": "ruby", ".lua": "lua", ".zig": "zig", ".cs": "csharp",
}

// LanguageID returns the LSP language identifier of the file at path by
// its extension ("typescriptreact" for a.tsx), or "" when it is unknown.
func LanguageID(path string) string {
	return languageIDs[filepath.Ext(path)]
}

// installHint says how to install the server name: with `tally lsp
// install` for those Tally installs (see [Installables]), else the
// usual way for the other default servers; "" for an unknown one.
func installHint(name string) string {
	if _, ok := LookupInstallable(name); ok {
		return "tally lsp install " + name + ", or Install in Settings → Language servers"
	}
	return otherHints[name]
}

// otherHints say how to install the default servers Tally does not
// install itself.
var otherHints = map[string]string{
	"rust-analyzer": "rustup component add rust-analyzer",
	"clangd":        "install clangd from your distribution (apt install clangd)",
}

// Defaults returns the built-in servers, freshly allocated, in a fixed
// order: gopls, pyright, typescript-language-server, rust-analyzer and
// clangd. gopls runs with GOTOOLCHAIN=local, so loading a workspace never
// downloads a Go toolchain, and with no diagnostics delay, so it
// publishes each version's diagnostics once, its analyzers' (vet's
// checks) included, rather than the type errors first and the rest a
// second later.
func Defaults() []ServerConfig {
	return []ServerConfig{
		{Name: "gopls", Command: "gopls", Languages: []string{"go"}, Extensions: []string{".go"},
			InitOptions: json.RawMessage(`{"diagnosticsDelay":"0s"}`), Env: []string{"GOTOOLCHAIN=local"}},
		{Name: "pyright", Command: "pyright-langserver", Args: []string{"--stdio"},
			Languages: []string{"python"}, Extensions: []string{".py", ".pyi"}},
		{Name: "typescript-language-server", Command: "typescript-language-server", Args: []string{"--stdio"},
			Languages:  []string{"typescript", "typescriptreact", "javascript", "javascriptreact"},
			Extensions: []string{".ts", ".tsx", ".js", ".jsx", ".mts", ".cts", ".mjs", ".cjs"}},
		{Name: "rust-analyzer", Command: "rust-analyzer", Languages: []string{"rust"}, Extensions: []string{".rs"}},
		{Name: "clangd", Command: "clangd", Languages: []string{"c", "cpp"},
			Extensions: []string{".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"}},
	}
}

// UserPath returns the user's language-server file,
// $XDG_CONFIG_HOME/tally/lsp.json, or lsp.json in Tally's folder of
// os.UserConfigDir (~/.config/tally/lsp.json on Linux).
func UserPath() (string, error) { return userconfig.File(FileName) }

// fileServer is one entry of the file.
type fileServer struct {
	Command     string            `json:"command"`
	Args        []string          `json:"args"`
	Extensions  []string          `json:"extensions"`
	Languages   []string          `json:"languages"`
	InitOptions json.RawMessage   `json:"init_options"`
	Env         map[string]string `json:"env"`
	Disabled    bool              `json:"disabled"`
}

// fileConfig is the file's shape.
type fileConfig struct {
	Servers map[string]json.RawMessage `json:"servers"`
}

// LoadConfig returns the built-in servers ([Defaults]) with the servers of
// the file at path merged over them: a server of the file replaces the
// built-in one of the same name (or is added after them, sorted by name),
// and one marked "disabled" is removed. The file has the shape
//
//	{"servers": {"gopls": {"command": "gopls", "args": [], "extensions": [".go"],
//	  "languages": ["go"], "init_options": {...}, "env": {"K": "V"}, "disabled": false}}}
//
// A missing file is not an error (the defaults are returned); a file that
// cannot be read or parsed, an unknown field or a server without a
// command or extensions is, and its error names the file and the server.
func LoadConfig(path string) ([]ServerConfig, error) {
	servers := Defaults()
	data, truncated, err := safefile.Read(path, maxConfigSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return servers, nil
	case err != nil:
		return nil, fmt.Errorf("the language-server file %s cannot be read (%w); fix its permissions or remove it", path, err)
	case truncated:
		return nil, fmt.Errorf("the language-server file %s is larger than %d bytes; shorten it", path, maxConfigSize)
	}
	var fc fileConfig
	if err := strictJSON(data, &fc); err != nil {
		return nil, fmt.Errorf("the language-server file %s is not valid (%w); fix it to the shape {\"servers\": {\"name\": {\"command\": ...}}}", path, err)
	}
	names := make([]string, 0, len(fc.Servers))
	for name := range fc.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !serverNameRE.MatchString(name) {
			return nil, fmt.Errorf("the language-server file %s names a server %q; use letters, digits, '.', '_' and '-' only", path, name)
		}
		var entry fileServer
		if err := strictJSON(fc.Servers[name], &entry); err != nil {
			return nil, fmt.Errorf("the server %q of the language-server file %s is not valid (%w); fix its fields", name, path, err)
		}
		i := slices.IndexFunc(servers, func(s ServerConfig) bool { return s.Name == name })
		if entry.Disabled {
			if i >= 0 {
				servers = slices.Delete(servers, i, i+1)
			}
			continue
		}
		sc, err := entry.config(name)
		if err != nil {
			return nil, fmt.Errorf("the server %q of the language-server file %s %w", name, path, err)
		}
		if i >= 0 {
			servers[i] = sc
		} else {
			servers = append(servers, sc)
		}
	}
	return servers, nil
}

// config checks a file entry and turns it into a ServerConfig.
func (e *fileServer) config(name string) (ServerConfig, error) {
	if strings.TrimSpace(e.Command) == "" {
		return ServerConfig{}, errors.New(`has no "command"; give the program to run, or mark it "disabled"`)
	}
	if len(e.Extensions) == 0 {
		return ServerConfig{}, errors.New(`has no "extensions"; list the file endings it handles, such as [".go"]`)
	}
	sc := ServerConfig{Name: name, Command: e.Command, Args: e.Args, Languages: e.Languages}
	for _, ext := range e.Extensions {
		if ext == "" || strings.ContainsAny(ext, `/\`) {
			return ServerConfig{}, fmt.Errorf("has the extension %q; give file endings such as \".go\"", ext)
		}
		if !strings.HasPrefix(ext, ".") {
			ext = "." + ext
		}
		sc.Extensions = append(sc.Extensions, ext)
	}
	if t := bytes.TrimSpace(e.InitOptions); len(t) > 0 && string(t) != "null" {
		sc.InitOptions = slices.Clone(t)
	}
	keys := make([]string, 0, len(e.Env))
	for k := range e.Env {
		if k == "" || strings.Contains(k, "=") {
			return ServerConfig{}, fmt.Errorf("has the environment variable name %q; use plain names", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sc.Env = append(sc.Env, k+"="+e.Env[k])
	}
	return sc, nil
}

// strictJSON decodes one JSON value into v, refusing unknown fields and
// trailing text.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("extra text after the JSON object")
	}
	return nil
}
