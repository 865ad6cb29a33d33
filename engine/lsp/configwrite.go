package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tally-dev/tally/internal/safefile"
)

// Changing the user's language-server file from Settings: each change
// reads the file, edits one entry of "servers" and writes it back
// atomically, keeping the other entries, the entry's fields it does not
// set and any other top-level keys.

// ConfiguredServer is one server as the user's file and the built-in
// ones make it, disabled ones included.
type ConfiguredServer struct {
	ServerConfig
	// BuiltIn says the server is one of [Defaults] (its entry in the file,
	// if any, overrides it).
	BuiltIn bool
	// InFile says the user's file has an entry for the server.
	InFile bool
	// Disabled says the entry is marked "disabled": sessions do not run
	// the server.
	Disabled bool
}

// ListServers returns every server of the file at path over the built-in
// ones, like [LoadConfig] but keeping the disabled ones (marked so): the
// built-in servers in their order, then the file's others sorted by
// name. It fails where LoadConfig does.
func ListServers(path string) ([]ConfiguredServer, error) {
	active, err := LoadConfig(path)
	if err != nil {
		return nil, err
	}
	_, servers, err := readEntries(path)
	if err != nil {
		return nil, err
	}
	var out []ConfiguredServer
	add := func(name string, builtIn *ServerConfig) {
		cs := ConfiguredServer{BuiltIn: builtIn != nil}
		_, cs.InFile = servers[name]
		if i := slices.IndexFunc(active, func(s ServerConfig) bool { return s.Name == name }); i >= 0 {
			cs.ServerConfig = active[i]
			out = append(out, cs)
			return
		}
		cs.Disabled = true
		var e fileServer
		_ = json.Unmarshal(servers[name], &e) // LoadConfig has checked it
		sc, err := e.config(name)
		switch {
		case err == nil:
			cs.ServerConfig = sc
		case builtIn != nil:
			cs.ServerConfig = *builtIn
		default:
			cs.ServerConfig = ServerConfig{Name: name, Command: e.Command, Args: e.Args, Languages: e.Languages, Extensions: e.Extensions}
		}
		out = append(out, cs)
	}
	defaults := Defaults()
	for i := range defaults {
		add(defaults[i].Name, &defaults[i])
	}
	names := make([]string, 0, len(servers))
	for name := range servers {
		if !isBuiltIn(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		add(name, nil)
	}
	return out, nil
}

// CheckServer reports in one sentence what is wrong with a server to be
// saved under name, or nil: the name must be one a log file can take,
// and the server needs a command, at least one extension, each starting
// with ".", and init options that are valid JSON.
func CheckServer(name string, c ServerConfig) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("the server has no name; give it one, such as \"zls\"")
	case !serverNameRE.MatchString(name):
		return fmt.Errorf("the server name %q cannot be used; use letters, digits, '.', '_' and '-' only", name)
	case strings.TrimSpace(c.Command) == "":
		return fmt.Errorf("the server %q has no command; give the program to run, such as \"zls\"", name)
	case len(c.Extensions) == 0:
		return fmt.Errorf("the server %q has no extensions; list the file endings it handles, such as \".zig\"", name)
	}
	for _, ext := range c.Extensions {
		if len(ext) < 2 || !strings.HasPrefix(ext, ".") || strings.ContainsAny(ext, `/\ `) {
			return fmt.Errorf("the server %q has the extension %q; give file endings starting with a dot, such as \".zig\"", name, ext)
		}
	}
	if t := bytes.TrimSpace(c.InitOptions); len(t) > 0 && !json.Valid(t) {
		return fmt.Errorf("the init options of the server %q are not valid JSON; fix them or leave them empty", name)
	}
	for _, kv := range c.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("the server %q has the environment entry %q; use NAME=value", name, kv)
		}
	}
	return nil
}

// SaveServer writes c as the entry name of the user's language-server
// file at path, adding it or replacing its command, args, extensions,
// languages and init options; its other fields ("disabled", and "env"
// when c has no Env) are kept. Saving a built-in server's name overrides
// the built-in one. The folder is created when needed.
func SaveServer(path, name string, c ServerConfig) error {
	if err := CheckServer(name, c); err != nil {
		return fmt.Errorf("%w; nothing was saved", err)
	}
	return editEntry(path, func(servers map[string]json.RawMessage) error {
		entry, err := entryFields(path, name, servers[name])
		if err != nil {
			return err
		}
		set := func(key string, v any, empty bool) {
			if empty {
				delete(entry, key)
				return
			}
			raw, _ := json.Marshal(v) // strings and maps of strings always encode
			entry[key] = raw
		}
		set("command", strings.TrimSpace(c.Command), false)
		set("args", c.Args, len(c.Args) == 0)
		set("extensions", c.Extensions, false)
		set("languages", c.Languages, len(c.Languages) == 0)
		if t := bytes.TrimSpace(c.InitOptions); len(t) > 0 && string(t) != "null" {
			entry["init_options"] = slices.Clone(t)
		} else {
			delete(entry, "init_options")
		}
		if len(c.Env) > 0 {
			env := map[string]string{}
			for _, kv := range c.Env {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			set("env", env, false)
		}
		servers[name] = mustJSON(entry)
		return nil
	})
}

// RemoveServer deletes the entry name from the user's language-server
// file at path, keeping the others. Removing a built-in server's entry
// (an override, or its "disabled") restores the built-in server; a
// built-in server the file does not name is left as it is.
func RemoveServer(path, name string) error {
	return editEntry(path, func(servers map[string]json.RawMessage) error {
		if _, ok := servers[name]; !ok {
			if isBuiltIn(name) {
				return errUnchanged
			}
			return fmt.Errorf("the language-server file %s has no server %q; reopen Settings to see its servers", path, name)
		}
		delete(servers, name)
		return nil
	})
}

// DisableServer marks the server name "disabled" in the user's
// language-server file at path, or clears the mark when disabled is
// false, keeping the entry's other fields. Disabling a built-in server
// the file does not name adds an entry of only the mark; enabling a
// built-in server whose entry is only the mark removes the entry.
func DisableServer(path, name string, disabled bool) error {
	return editEntry(path, func(servers map[string]json.RawMessage) error {
		raw, ok := servers[name]
		if !ok {
			switch {
			case !isBuiltIn(name):
				return fmt.Errorf("the language-server file %s has no server %q; add it first", path, name)
			case !disabled:
				return errUnchanged
			}
		}
		entry, err := entryFields(path, name, raw)
		if err != nil {
			return err
		}
		if disabled {
			entry["disabled"] = json.RawMessage("true")
			servers[name] = mustJSON(entry)
			return nil
		}
		delete(entry, "disabled")
		var e fileServer
		_ = json.Unmarshal(mustJSON(entry), &e)
		if strings.TrimSpace(e.Command) == "" {
			if isBuiltIn(name) && len(entry) == 0 {
				delete(servers, name)
				return nil
			}
			return fmt.Errorf("the server %q of %s has no command, so it cannot be enabled; edit it to give the program to run", name, path)
		}
		servers[name] = mustJSON(entry)
		return nil
	})
}

// errUnchanged is returned by an edit that leaves the file as it is.
var errUnchanged = errors.New("unchanged")

// isBuiltIn reports whether name is one of [Defaults].
func isBuiltIn(name string) bool {
	return slices.ContainsFunc(Defaults(), func(s ServerConfig) bool { return s.Name == name })
}

// entryFields decodes a server's entry into its fields; a missing entry
// is an empty one.
func entryFields(path, name string, raw json.RawMessage) (map[string]json.RawMessage, error) {
	entry := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &entry); err != nil {
			return nil, fmt.Errorf("the server %q of the language-server file %s is not a JSON object (%w), so the file was not changed; fix or remove the entry", name, path, err)
		}
	}
	return entry, nil
}

// mustJSON encodes a map of JSON values, which cannot fail.
func mustJSON(m map[string]json.RawMessage) json.RawMessage {
	raw, err := json.Marshal(m)
	if err != nil {
		panic("lsp: encoding JSON values: " + err.Error())
	}
	return raw
}

// readEntries reads the file at path as its top-level keys and its
// "servers" entries; a missing file has none.
func readEntries(path string) (top, servers map[string]json.RawMessage, err error) {
	top, servers = map[string]json.RawMessage{}, map[string]json.RawMessage{}
	data, truncated, err := safefile.Read(path, maxConfigSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return top, servers, nil
	case err != nil:
		return nil, nil, fmt.Errorf("the language-server file %s cannot be read (%w); fix its permissions or remove it", path, err)
	case truncated:
		return nil, nil, fmt.Errorf("the language-server file %s is larger than %d bytes; shorten it", path, maxConfigSize)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return top, servers, nil
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, fmt.Errorf("the language-server file %s is not a valid JSON object (%w), so it was not changed; fix or remove it", path, err)
	}
	if raw := bytes.TrimSpace(top["servers"]); len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, nil, fmt.Errorf("the \"servers\" of the language-server file %s is not a JSON object (%w), so the file was not changed; fix or remove it", path, err)
		}
	}
	return top, servers, nil
}

// editEntry reads the file at path, lets edit change its servers and
// writes the file back atomically with permissions 0600, creating its
// folder when needed. An edit returning errUnchanged writes nothing.
func editEntry(path string, edit func(servers map[string]json.RawMessage) error) error {
	top, servers, err := readEntries(path)
	if err != nil {
		return err
	}
	if err := edit(servers); errors.Is(err, errUnchanged) {
		return nil
	} else if err != nil {
		return err
	}
	top["servers"] = mustJSON(servers)
	data, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return fmt.Errorf("the language-server file %s cannot be encoded (%w); report this bug", path, err)
	}
	return writeAtomic(path, append(data, '\n'))
}

// writeAtomic replaces the file at path with data through a temporary
// file in its folder, so a reader never sees half of it.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("the folder %s cannot be created (%w); check its permissions", dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".lsp-*.json")
	if err != nil {
		return fmt.Errorf("the language-server file %s cannot be written (%w); check its folder's permissions", path, err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("the language-server file %s cannot be written (%w); check its folder's permissions", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("the language-server file %s cannot be written (%w); check the free disk space", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("the language-server file %s cannot be written (%w); check the free disk space", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("the language-server file %s cannot be written (%w); check the free disk space", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("the language-server file %s cannot be replaced (%w); check its permissions", path, err)
	}
	return nil
}
