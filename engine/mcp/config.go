package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tally-dev/tally/internal/safefile"
	"github.com/tally-dev/tally/internal/userconfig"
)

// FileName is the name of an MCP configuration file, both in the user's
// config folder (under "tally") and in a workspace's ".tally" folder.
const FileName = "mcp.json"

// maxConfigSize bounds the size of an MCP configuration file that is read.
const maxConfigSize = 1 << 20

// maxServerName is the longest allowed server name, in bytes.
const maxServerName = 32

var serverNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// Transport kinds of [ServerConfig.Type].
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// Config is the content of one or more mcp.json files: the MCP servers by
// name. The zero value is an empty configuration.
type Config struct {
	Servers map[string]ServerConfig `json:"mcpServers"`
}

// ServerConfig describes one MCP server, in the shape other MCP clients use:
// either a command to run (stdio) or a URL (streamable HTTP, or SSE when
// Type is "sse").
type ServerConfig struct {
	// Type is "stdio", "http" (also spelled "streamable-http" or
	// "streamableHttp" in the file) or "sse"; "" infers stdio from Command
	// and http from URL.
	Type string `json:"type,omitempty"`
	// Command and Args start a stdio server; Env adds variables to the
	// child's small allow-listed environment. A value "${NAME}" takes NAME
	// from Tally's own environment, so a secret can be passed on purpose.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL and Headers reach an HTTP server.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// OAuth tunes signing in to an HTTP server that asks for it; nil
	// works for most servers (see [OAuthConfig]).
	OAuth *OAuthConfig `json:"oauth,omitempty"`
	// Disabled servers are kept in the file but never started.
	Disabled bool `json:"disabled,omitempty"`
	// Timeout bounds each call, in seconds, and connecting too (though
	// connecting always gets at least [MinConnectTimeout]); 0 means
	// [DefaultTimeout].
	Timeout float64 `json:"timeout,omitempty"`
	// AllowReadOnly lets the tools this server annotates as read-only run
	// without asking.
	AllowReadOnly bool `json:"allowReadOnly,omitempty"`

	// Source is the file this server was read from; it is not saved.
	Source string `json:"-"`
	// Workspace is set on the servers of a workspace's MCP file: they
	// start in the workspace and are checked with Options.Verify before
	// every start. It is not saved.
	Workspace bool `json:"-"`
}

// DefaultTimeout bounds each call to a server's tool, and connecting to the
// server, when its configuration sets no timeout.
const DefaultTimeout = 60 * time.Second

// MinConnectTimeout is the least time a server gets to start and list its
// tools, however short its call timeout: starting a server (npx, uvx) can
// take longer than a call should.
const MinConnectTimeout = 10 * time.Second

// CallTimeout returns the server's per-call timeout.
func (s ServerConfig) CallTimeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultTimeout
	}
	return time.Duration(s.Timeout * float64(time.Second))
}

// ConnectTimeout returns how long the server gets to start, initialise and
// list its tools: its call timeout, but at least [MinConnectTimeout].
func (s ServerConfig) ConnectTimeout() time.Duration {
	return max(s.CallTimeout(), MinConnectTimeout)
}

// Kind returns the transport the server uses: [TypeStdio], [TypeHTTP] or
// [TypeSSE].
func (s ServerConfig) Kind() string {
	switch strings.ToLower(s.Type) {
	case "stdio":
		return TypeStdio
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		return TypeHTTP
	case "sse":
		return TypeSSE
	case "":
		if s.Command == "" && s.URL != "" {
			return TypeHTTP
		}
		return TypeStdio
	}
	return ""
}

// ValidateName reports whether name may name a server: 1 to 32 letters,
// digits, '_' or '-'.
func ValidateName(name string) error {
	switch {
	case name == "":
		return errors.New("a server name is empty; give every server a name of letters, digits, '_' or '-'")
	case len(name) > maxServerName:
		return fmt.Errorf("server name %q is longer than %d characters; shorten it", name, maxServerName)
	case !serverNameRE.MatchString(name):
		return fmt.Errorf("server name %q may only hold letters, digits, '_' and '-'; rename it", name)
	}
	return nil
}

// Validate reports the first problem of the server's settings, in one
// sentence naming the server.
func (s ServerConfig) Validate(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	kind := s.Kind()
	switch {
	case kind == "":
		return fmt.Errorf("server %q has an unknown type %q; use \"stdio\", \"http\" or \"sse\"", name, s.Type)
	case s.Command != "" && s.URL != "":
		return fmt.Errorf("server %q sets both a command and a url; keep only one", name)
	case kind == TypeStdio && s.Command == "":
		return fmt.Errorf("server %q has neither a command nor a url; set one of them", name)
	case kind != TypeStdio && s.URL == "":
		return fmt.Errorf("server %q of type %q has no url; set its url", name, kind)
	case s.Timeout < 0:
		return fmt.Errorf("server %q has a negative timeout; set a number of seconds or remove it", name)
	}
	if kind != TypeStdio {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("server %q has url %q, which is not an http:// or https:// address; correct it", name, s.URL)
		}
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("server %q has an invalid environment variable name %q; use a name without '='", name, k)
		}
	}
	for k := range s.Headers {
		if k == "" || strings.ContainsAny(k, ": \r\n") {
			return fmt.Errorf("server %q has an invalid header name %q; use a plain header name", name, k)
		}
	}
	return s.OAuth.validate(name, kind)
}

// validate checks the sign-in settings of server name of the given kind.
func (o *OAuthConfig) validate(name, kind string) error {
	if o == nil {
		return nil
	}
	switch {
	case kind == TypeStdio:
		return fmt.Errorf("server %q runs a command, so its oauth settings have no use; remove them", name)
	case o.ClientSecret != "" && o.ClientID == "":
		return fmt.Errorf("server %q has an oauth client secret but no client ID; set clientId too", name)
	case o.CallbackPort < 0 || o.CallbackPort > 65535:
		return fmt.Errorf("server %q has oauth callbackPort %d, which is not a port; use 1 to 65535, or 0 for any free one", name, o.CallbackPort)
	}
	if o.ClientMetadataURL != "" {
		u, err := url.Parse(o.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return fmt.Errorf("server %q has oauth clientMetadataUrl %q, which is not an https address with a path; correct it", name, o.ClientMetadataURL)
		}
	}
	return nil
}

// Names returns the server names, sorted.
func (c Config) Names() []string {
	out := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Set adds or replaces the server name after validating it.
func (c *Config) Set(name string, s ServerConfig) error {
	if err := s.Validate(name); err != nil {
		return err
	}
	if c.Servers == nil {
		c.Servers = map[string]ServerConfig{}
	}
	c.Servers[name] = s
	return nil
}

// Remove deletes the server name, if present.
func (c *Config) Remove(name string) { delete(c.Servers, name) }

// SetDisabled enables or disables the server name.
func (c *Config) SetDisabled(name string, disabled bool) error {
	s, ok := c.Servers[name]
	if !ok {
		return fmt.Errorf("there is no MCP server %q; add it first", name)
	}
	s.Disabled = disabled
	c.Servers[name] = s
	return nil
}

// Parse reads the content of an mcp.json file; source names the file in
// errors. Empty content is an empty configuration. Every server is
// validated, and an error names the file and the server.
func Parse(data []byte, source string) (Config, error) {
	var cfg Config
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return Config{}, fmt.Errorf("%s is not valid MCP configuration JSON (%w); fix the file or remove it", source, err)
	}
	for _, name := range cfg.Names() {
		s := cfg.Servers[name]
		if err := s.Validate(name); err != nil {
			return Config{}, fmt.Errorf("%s: %w", source, err)
		}
		s.Source = source
		cfg.Servers[name] = s
	}
	return cfg, nil
}

// Fingerprint returns the hex SHA-256 of a file's content. Trusting a
// workspace's MCP file records its [TrustHash] instead, which also covers
// the workspace files its servers run.
func Fingerprint(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// UserPath returns the user's MCP file: $XDG_CONFIG_HOME/tally/mcp.json
// when XDG_CONFIG_HOME is set, otherwise tally/mcp.json under
// os.UserConfigDir (~/.config on Linux).
func UserPath() (string, error) { return userconfig.File(FileName) }

// WorkspacePath returns the MCP file of the workspace ws: .tally/mcp.json.
func WorkspacePath(ws string) string {
	return filepath.Join(ws, ".tally", FileName)
}

// readFile reads at most maxConfigSize bytes of path through
// [safefile.Read], so a FIFO or a device never blocks the caller; a missing
// file gives nil data and no error.
func readFile(path string) ([]byte, error) {
	data, cut, err := safefile.Read(path, maxConfigSize)
	return configData(path, data, cut, err)
}

// readWorkspaceFile reads the MCP file of workspace ws confined to it (see
// [safefile.ReadIn]): never a FIFO, a device or a symlink, never a file
// outside the workspace. A missing file gives nil data and no error.
func readWorkspaceFile(ws string) ([]byte, error) {
	path := WorkspacePath(ws)
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil, fmt.Errorf("the workspace %s cannot be opened (%w); check that it exists and is readable", ws, err)
	}
	defer root.Close()
	data, cut, err := safefile.ReadIn(root, filepath.Join(".tally", FileName), maxConfigSize)
	return configData(path, data, cut, err)
}

// configData is safefile.Config with the file's size limit.
func configData(path string, data []byte, cut bool, err error) ([]byte, error) {
	return safefile.Config(path, data, cut, err, maxConfigSize)
}

// LoadFile reads and parses the MCP file at path; a missing file is an
// empty configuration.
func LoadFile(path string) (Config, error) {
	data, err := readFile(path)
	if err != nil {
		return Config{}, err
	}
	return Parse(data, path)
}

// LoadUser reads the user's MCP file (see [UserPath]).
func LoadUser() (Config, error) {
	path, err := UserPath()
	if err != nil {
		return Config{}, err
	}
	return LoadFile(path)
}

// WorkspaceFile describes a workspace's MCP file for the trust prompt.
type WorkspaceFile struct {
	// Path is the file, "" when the workspace has none; Hash its
	// [TrustHash] (covering the workspace files its servers run), "" also
	// when those cannot be covered.
	Path string
	Hash string
	// NeedsTrust is set when the file exists but its hash is not trusted:
	// its servers were not returned and must not be started until the
	// user trusts this exact content.
	NeedsTrust bool
	// Preview is the parsed file, to show the user what trusting it would
	// run. It is never to be connected without trust.
	Preview Config
}

// LoadWorkspace reads the MCP file of workspace ws. Its servers are
// returned (marked ServerConfig.Workspace) only when trusted(hash) accepts
// the file's [TrustHash]; otherwise the Config is empty and the
// WorkspaceFile says NeedsTrust. Any change to the file, or to a workspace
// file its servers run, changes the hash and so asks for trust again.
func LoadWorkspace(ws string, trusted func(hash string) bool) (Config, WorkspaceFile, error) {
	path := WorkspacePath(ws)
	data, err := readWorkspaceFile(ws)
	if err != nil || data == nil {
		return Config{}, WorkspaceFile{}, err
	}
	wf := WorkspaceFile{Path: path}
	cfg, err := Parse(data, path)
	if err != nil {
		return Config{}, wf, err
	}
	for n, s := range cfg.Servers {
		s.Workspace = true
		cfg.Servers[n] = s
	}
	wf.Preview = cfg
	if wf.Hash, err = TrustHash(ws, data, cfg); err != nil {
		// Nothing the user could review covers what would run.
		return Config{}, wf, err
	}
	if trusted == nil || !trusted(wf.Hash) {
		wf.NeedsTrust = len(cfg.Servers) > 0
		return Config{}, wf, nil
	}
	return cfg, wf, nil
}

// Merge combines the user's configuration with a workspace's: the user's
// servers come first and win on a name both define (a repository cannot
// redirect a server the user configured); each such clash is reported in
// the returned notes.
func Merge(user, workspace Config) (Config, []string) {
	out := Config{Servers: map[string]ServerConfig{}}
	for n, s := range user.Servers {
		out.Servers[n] = s
	}
	var notes []string
	for _, n := range workspace.Names() {
		if _, ok := out.Servers[n]; ok {
			notes = append(notes, fmt.Sprintf("the workspace's MCP server %q is ignored because the user's configuration defines a server of that name; rename one of them", n))
			continue
		}
		out.Servers[n] = workspace.Servers[n]
	}
	return out, notes
}

// Save writes cfg's servers to the MCP file at path, keeping any other
// top-level keys the file has. The file is written atomically with
// permissions 0600, since headers and env may hold secrets.
func Save(path string, cfg Config) error {
	for _, n := range cfg.Names() {
		if err := cfg.Servers[n].Validate(n); err != nil {
			return fmt.Errorf("%s not saved: %w", path, err)
		}
	}
	top := map[string]json.RawMessage{}
	old, err := readFile(path)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &top); err != nil {
			return fmt.Errorf("%s is not valid JSON (%w), so it was not overwritten; fix or remove it first", path, err)
		}
	}
	servers := cfg.Servers
	if servers == nil {
		servers = map[string]ServerConfig{}
	}
	raw, err := json.Marshal(servers)
	if err != nil {
		return fmt.Errorf("the MCP configuration cannot be encoded (%w); report this bug", err)
	}
	top["mcpServers"] = raw
	data, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return fmt.Errorf("the MCP configuration cannot be encoded (%w); report this bug", err)
	}
	data = append(data, '\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("the folder of %s cannot be created (%w); check its permissions", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mcp-*.json")
	if err != nil {
		return fmt.Errorf("%s cannot be written (%w); check its folder's permissions", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("%s cannot be written (%w); check the free disk space", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s cannot be written (%w); check the free disk space", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s cannot be replaced (%w); check its permissions", path, err)
	}
	return nil
}

// UntrustedNote is the one-line note for a workspace MCP file that is
// not trusted: what was skipped and how to trust it.
func UntrustedNote(workspace string) string {
	return fmt.Sprintf("the MCP servers of %s were not started because the file is not trusted yet; review it, then trust it in Settings or with `tally mcp trust --workspace %s`",
		WorkspacePath(workspace), workspace)
}
