package mcp

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/internal/text"
)

// This file lists the prompts and resources of the connected servers, for
// the prompt box's slash commands and "@server:uri" attachments. Lists are
// cached per connection for listTTL: a reconnected server is listed anew,
// and a server that changed its lists is seen again within listTTL.

// Prompt is one prompt a server offers; the prompt box shows it as the
// slash command "/<Server>:<Name>".
type Prompt struct {
	Server string
	// Name is the prompt's name on its server.
	Name string
	// Title and Description are the server's words, on one line each
	// and cut to maxDescription bytes; either may be "".
	Title, Description string
	// Arguments are the declared arguments, in the server's order.
	Arguments []PromptArgument
}

// PromptArgument is one declared argument of a [Prompt].
type PromptArgument struct {
	Name        string
	Description string
	// Required: the server needs a value for it.
	Required bool
}

// Resource is one resource a server offers, attached to a message with
// "@<Server>:<URI>".
type Resource struct {
	Server string
	// URI names the resource on its server; for a template it holds the
	// URI template (RFC 6570), such as "file:///{path}".
	URI string
	// Name, Title, Description and MIMEType are the server's words (one
	// line each; any may be ""); Size is the size the server announced in
	// bytes, 0 when unsaid.
	Name, Title, Description, MIMEType string
	Size                               int64
	// Template is set for a URI template: its variables are filled in
	// before it is read.
	Template bool
}

// Limits of what one server's lists keep.
const (
	maxPrompts   = 500
	maxResources = 1000
	// listTTL is how long a server's lists are reused before it is asked
	// again, unless it speaks the 2026-07-28 revision and its lists carry
	// a cache hint (ttlMs), which is followed, but never under
	// minListTTL: the prompt box asks as the user types.
	listTTL    = 30 * time.Second
	minListTTL = 2 * time.Second
	// listTimeout bounds the listing of one server; a slow server is left
	// out of the lists rather than hold up the prompt box.
	listTimeout = 10 * time.Second
)

// serverLists is the cache of one server's prompts and resources.
type serverLists struct {
	fetch sync.Mutex // held while listing, so concurrent callers share one listing

	mu        sync.Mutex
	gen       int // the connection listed; 0: none yet
	at        time.Time
	ttl       time.Duration // how long the lists stay fresh
	prompts   []Prompt
	resources []Resource
}

// lists holds each server's serverLists, keyed weakly by the server so
// that an entry goes with its server.
var lists sync.Map // weak.Pointer[server] -> *serverLists

func listsOf(s *server) *serverLists {
	k := weak.Make(s)
	if v, ok := lists.Load(k); ok {
		return v.(*serverLists)
	}
	v, loaded := lists.LoadOrStore(k, &serverLists{})
	if !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[server]) { lists.Delete(k) }, k)
	}
	return v.(*serverLists)
}

// Prompts returns the prompts of every connected server, sorted by server
// then name. It never starts or restarts a server; a server that does not
// answer within listTimeout, or fails to list its prompts, is left out
// (its log says why). Servers are asked in parallel.
func (m *Manager) Prompts(ctx context.Context) []Prompt {
	var out []Prompt
	for _, l := range m.listAll(ctx) {
		out = append(out, l.prompts...)
	}
	return out
}

// Resources returns the resources and resource templates of every
// connected server, sorted by server, then resources before templates,
// then URI. Like [Manager.Prompts], it never starts a server and leaves
// out one that fails.
func (m *Manager) Resources(ctx context.Context) []Resource {
	var out []Resource
	for _, l := range m.listAll(ctx) {
		out = append(out, l.resources...)
	}
	return out
}

// listed is what listAll found of one server.
type listed struct {
	prompts   []Prompt
	resources []Resource
}

// listAll lists every connected server, in parallel, in the order of the
// servers' names.
func (m *Manager) listAll(ctx context.Context) []listed {
	out := make([]listed, len(m.names))
	var wg sync.WaitGroup
	for i, name := range m.names {
		s := m.servers[name]
		wg.Go(func() { out[i].prompts, out[i].resources = s.lists(ctx, false) })
	}
	wg.Wait()
	return out
}

// lists returns the server's prompts and resources: the cached ones when
// they are of the current connection and younger than listTTL (unless
// fresh is set), otherwise listed again. A server that is not connected
// has none.
func (s *server) lists(ctx context.Context, fresh bool) ([]Prompt, []Resource) {
	s.mu.Lock()
	cs, gen, st := s.cs, s.gen, s.state
	s.mu.Unlock()
	if cs == nil || st != StateConnected {
		return nil, nil
	}
	c := listsOf(s)
	if p, r, ok := c.current(gen, fresh); ok {
		return p, r
	}
	c.fetch.Lock()
	defer c.fetch.Unlock()
	if !fresh {
		if p, r, ok := c.current(gen, false); ok {
			return p, r // listed by the caller this one waited for
		}
	}
	ctx, cancel := context.WithTimeout(ctx, min(listTimeout, s.cfg.CallTimeout()))
	defer cancel()
	prompts, pfresh := s.listPrompts(ctx, cs)
	resources, rfresh := s.listResources(ctx, cs)
	c.mu.Lock()
	c.gen, c.at, c.prompts, c.resources = gen, time.Now(), prompts, resources
	c.ttl = listFreshness(protocolOf(cs), pfresh, rfresh)
	c.mu.Unlock()
	return prompts, resources
}

// forgetLists drops the cached prompts and resources of s, so the next
// listing asks the server: it said they changed.
func (s *server) forgetLists() {
	c := listsOf(s)
	c.mu.Lock()
	c.gen = 0
	c.mu.Unlock()
}

// current returns the cached lists when they are of connection gen and
// recent enough.
func (c *serverLists) current(gen int, fresh bool) ([]Prompt, []Resource, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fresh || c.gen != gen || c.gen == 0 || time.Since(c.at) > c.ttl {
		return nil, nil, false
	}
	return c.prompts, c.resources, true
}

// capabilities returns what the server said it supports, nil when unknown.
func capabilities(cs *sdk.ClientSession) *sdk.ServerCapabilities {
	if r := cs.InitializeResult(); r != nil {
		return r.Capabilities
	}
	return nil
}

// listFreshness is how long lists whose pages gave the cache hints
// hints (-1: no page read) stay fresh for a server of protocol.
func listFreshness(protocol string, hints ...time.Duration) time.Duration {
	fresh := shortestHint(hints...)
	if protocol < modernProtocol || fresh < 0 {
		return listTTL
	}
	return max(fresh, minListTTL)
}

// listPrompts lists the prompts of the session, following pages, up to
// maxPrompts, sorted by name, with the shortest cache hint of its pages
// (-1 when none was read); a server without prompts has none.
func (s *server) listPrompts(ctx context.Context, cs *sdk.ClientSession) ([]Prompt, time.Duration) {
	if caps := capabilities(cs); caps != nil && caps.Prompts == nil {
		return nil, -1
	}
	var out []Prompt
	fresh, err := listPages(ctx, func(ctx context.Context, cursor string) ([]*sdk.Prompt, string, int, error) {
		res, err := cs.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
		if err != nil || res == nil {
			return nil, "", 0, err
		}
		return res.Prompts, res.NextCursor, res.TTLMs, nil
	}, func(p *sdk.Prompt) bool {
		if p != nil && usableName(p.Name) {
			out = append(out, promptOf(s.name, p))
		}
		return len(out) < maxPrompts
	})
	if err != nil {
		s.log.Note("the prompts could not be listed: " + text.OneLine(err.Error(), 300))
	}
	slices.SortFunc(out, func(a, b Prompt) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b Prompt) bool { return a.Name == b.Name }), fresh
}

// usableName reports whether a prompt name can be typed as one word.
func usableName(name string) bool {
	return name != "" && len(name) <= 128 && !strings.ContainsFunc(name, func(r rune) bool {
		return r <= ' ' || r == 0x7f || r == '"' || r == '\''
	})
}

func promptOf(server string, p *sdk.Prompt) Prompt {
	out := Prompt{Server: server, Name: p.Name, Title: oneLine(p.Title), Description: oneLine(p.Description)}
	for _, a := range p.Arguments {
		if a == nil || a.Name == "" || len(out.Arguments) >= 32 {
			continue
		}
		out.Arguments = append(out.Arguments, PromptArgument{Name: oneLine(a.Name), Description: oneLine(cmp.Or(a.Description, a.Title)), Required: a.Required})
	}
	return out
}

// oneLine is a server's text as one line of at most maxDescription bytes.
func oneLine(s string) string {
	return text.ClipBytes(text.OneLine(s, 0), maxDescription)
}

// listResources lists the resources and templates of the session,
// following pages, up to maxResources in all, with the shortest cache
// hint of their pages (-1 when none was read).
func (s *server) listResources(ctx context.Context, cs *sdk.ClientSession) ([]Resource, time.Duration) {
	if caps := capabilities(cs); caps != nil && caps.Resources == nil {
		return nil, -1
	}
	var out []Resource
	fresh, err := listPages(ctx, func(ctx context.Context, cursor string) ([]*sdk.Resource, string, int, error) {
		res, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil || res == nil {
			return nil, "", 0, err
		}
		return res.Resources, res.NextCursor, res.TTLMs, nil
	}, func(r *sdk.Resource) bool {
		if r != nil && r.URI != "" {
			out = append(out, Resource{Server: s.name, URI: r.URI, Name: oneLine(r.Name), Title: oneLine(r.Title),
				Description: oneLine(r.Description), MIMEType: oneLine(r.MIMEType), Size: max(r.Size, 0)})
		}
		return len(out) < maxResources
	})
	if err != nil {
		s.log.Note("the resources could not be listed: " + text.OneLine(err.Error(), 300))
	}
	if len(out) < maxResources {
		// Templates are optional: a server may list none, or fail to.
		tfresh, _ := listPages(ctx, func(ctx context.Context, cursor string) ([]*sdk.ResourceTemplate, string, int, error) {
			res, err := cs.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil || res == nil {
				return nil, "", 0, err
			}
			return res.ResourceTemplates, res.NextCursor, res.TTLMs, nil
		}, func(r *sdk.ResourceTemplate) bool {
			if r != nil && r.URITemplate != "" {
				out = append(out, Resource{Server: s.name, URI: r.URITemplate, Name: oneLine(r.Name), Title: oneLine(r.Title),
					Description: oneLine(r.Description), MIMEType: oneLine(r.MIMEType), Template: true})
			}
			return len(out) < maxResources
		})
		fresh = shortestHint(fresh, tfresh)
	}
	slices.SortStableFunc(out, func(a, b Resource) int {
		if a.Template != b.Template {
			if a.Template {
				return 1
			}
			return -1
		}
		return strings.Compare(a.URI, b.URI)
	})
	return slices.CompactFunc(out, func(a, b Resource) bool { return a.URI == b.URI && a.Template == b.Template }), fresh
}
