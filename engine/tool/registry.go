package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

type section int

const (
	sectionBuiltin section = iota
	sectionExtra
	sectionActive
)

type entry struct {
	spec Spec
	tool Tool
}

// Registry holds the tools offered to the model and runs calls to them. It
// is safe for concurrent use. Create one with [NewRegistry]; the zero value
// is an empty registry too.
//
// The catalog has three sections, in this order: built-in tools sorted by
// name, extra tools (for example from MCP servers) sorted by name, and
// late-activated tools in activation order. A tool's spec is captured when it
// is registered, so the catalog bytes of the tools already listed before a
// newly added extra or activated tool never change.
//
// Names are unique across the whole registry. Registering a tool under a name
// that is already present replaces the earlier tool in place: it keeps the
// earlier tool's section and position and only its spec and implementation
// change. Use [Registry.Remove] first to move a name to another section.
type Registry struct {
	mu       sync.RWMutex
	builtins []entry
	extras   []entry
	active   []entry
	where    map[string]section
	aliases  map[string]string // another name → the registered tool it runs
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{where: make(map[string]section)}
}

// AddBuiltin registers a built-in tool. Built-ins come first in the catalog,
// sorted by name.
func (r *Registry) AddBuiltin(t Tool) { r.add(t, sectionBuiltin) }

// AddExtra registers an extra tool, such as one provided by an MCP server.
// Extras follow the built-ins in the catalog, sorted by name.
func (r *Registry) AddExtra(t Tool) { r.add(t, sectionExtra) }

// Activate registers a late-activated tool. Activated tools come last in the
// catalog, in activation order, and are never re-sorted.
func (r *Registry) Activate(t Tool) { r.add(t, sectionActive) }

func (r *Registry) add(t Tool, sec section) {
	if t == nil {
		return
	}
	spec := cloneSpec(t.Spec())
	e := entry{spec: spec, tool: t}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.where == nil {
		r.where = make(map[string]section)
	}
	if old, ok := r.where[spec.Name]; ok {
		list := r.list(old)
		i := slices.IndexFunc(*list, func(x entry) bool { return x.spec.Name == spec.Name })
		(*list)[i] = e
		return
	}
	r.where[spec.Name] = sec
	list := r.list(sec)
	if sec == sectionActive {
		*list = append(*list, e)
		return
	}
	i, _ := slices.BinarySearchFunc(*list, spec.Name, func(x entry, name string) int {
		return strings.Compare(x.spec.Name, name)
	})
	*list = slices.Insert(*list, i, e)
}

func (r *Registry) list(sec section) *[]entry {
	switch sec {
	case sectionBuiltin:
		return &r.builtins
	case sectionExtra:
		return &r.extras
	default:
		return &r.active
	}
}

// Remove unregisters the tool with the given name, if any. The remaining
// tools keep their relative order.
func (r *Registry) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sec, ok := r.where[name]
	if !ok {
		return
	}
	delete(r.where, name)
	list := r.list(sec)
	*list = slices.DeleteFunc(*list, func(x entry) bool { return x.spec.Name == name })
}

// Catalog returns the specs of all registered tools in catalog order:
// built-ins sorted by name, then extras sorted by name, then activated tools
// in activation order. The same registrations always give byte-identical
// specs; the returned slice and its Parameters are copies the caller may
// modify.
func (r *Registry) Catalog() []Spec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Spec, 0, len(r.builtins)+len(r.extras)+len(r.active))
	for _, list := range [][]entry{r.builtins, r.extras, r.active} {
		for _, e := range list {
			out = append(out, cloneSpec(e.spec))
		}
	}
	return out
}

// Names returns the registered tool names in catalog order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for _, list := range [][]entry{r.builtins, r.extras, r.active} {
		for _, e := range list {
			out = append(out, e.spec.Name)
		}
	}
	return out
}

// Alias makes name another name of the tool registered as target: Lookup
// finds it under both, while the catalog and Names list only target, so
// an alias costs no prefix. A registered tool's own name wins over an
// alias.
func (r *Registry) Alias(name, target string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.aliases == nil {
		r.aliases = make(map[string]string)
	}
	r.aliases[name] = target
}

// Lookup returns the tool registered under name, or the one name is an
// alias of.
func (r *Registry) Lookup(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	sec, ok := r.where[name]
	if !ok {
		if target, aliased := r.aliases[name]; aliased {
			name = target
			sec, ok = r.where[name]
		}
	}
	if !ok {
		return nil, false
	}
	for _, e := range *r.list(sec) {
		if e.spec.Name == name {
			return e.tool, true
		}
	}
	return nil, false
}

// Run executes one call and always returns a Result; it does not ask for
// approval, which is the caller's job (see [Gate]).
//
//   - An unknown tool name gives an error Result listing the available tools.
//   - Arguments must be one JSON object; an empty string (or null) means {}.
//     Anything else gives an error Result quoting the parse error and asking
//     for valid JSON.
//   - A panic inside the tool is recovered into an error Result.
//   - Every Result, error Results included, goes through intake: secrets in
//     Content are replaced by "[redacted: kind]" markers with
//     secrets.Redact (counted in Redacted and RedactedKinds), then
//     Content longer than [IntakeLimit] bytes is shortened with [Truncate].
//     Nothing a secret rule recognises survives into the returned Content.
func (r *Registry) Run(ctx context.Context, env *Env, name, args string) Result {
	return intake(r.run(ctx, env, name, args))
}

func (r *Registry) run(ctx context.Context, env *Env, name, args string) (res Result) {
	t, ok := r.Lookup(name)
	if !ok {
		names := r.Names()
		avail := "none are registered"
		if len(names) > 0 {
			avail = "the available tools are " + strings.Join(names, ", ")
		}
		return Result{
			Content: fmt.Sprintf("unknown tool %s; %s", quoteSnippet(name, 80), avail),
			IsError: true,
		}
	}
	data := normalizeArgs([]byte(args))
	if err := checkObject(data); err != nil {
		return Result{
			Content: fmt.Sprintf("%s: arguments are not valid JSON (%v) in %s; send the arguments as one valid JSON object", name, err, quoteSnippet(args, 200)),
			IsError: true,
		}
	}
	defer func() {
		if p := recover(); p != nil {
			res = Result{
				Content: fmt.Sprintf("%s: the tool failed unexpectedly (panic: %s); try a different approach", name, printableLine(fmt.Sprint(p), 300)),
				IsError: true,
			}
		}
	}()
	return t.Run(ctx, env, json.RawMessage(data))
}

// intake redacts the secrets in res.Content, recording what it replaced,
// and then bounds its size. Redaction comes first, so that a cut cannot
// leave part of a secret that a rule would no longer recognise.
func intake(res Result) Result {
	res.Content = Truncate(res.redact(res.Content), IntakeLimit)
	return res
}

// checkObject reports why data is not exactly one JSON object.
func checkObject(data []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("extra text after the JSON value")
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("the arguments are a JSON %s, not an object", jsonKind(v))
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	default:
		return "value"
	}
}

func cloneSpec(s Spec) Spec {
	s.Parameters = bytes.Clone(s.Parameters)
	return s
}
