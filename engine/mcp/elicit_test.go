package mcp

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// profileSchema is the form the test server asks for: a field of every
// kind, each with a default but the email, which is required.
const profileSchema = `{"type":"object","properties":{
	"name":{"type":"string","title":"Name","default":"John Doe"},
	"age":{"type":"integer","minimum":0,"maximum":150,"default":30},
	"score":{"type":"number","default":95.5},
	"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
	"plan":{"type":"string","oneOf":[{"const":"free","title":"Free"},{"const":"pro","title":"Pro"}]},
	"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"default":["a"]},
	"verified":{"type":"boolean","default":true},
	"email":{"type":"string","format":"email"}},
	"required":["email","name"]}`

// formLog records what the client sent back to the server's forms, as it
// arrived (before the server's SDK applies defaults of its own).
type formLog struct {
	mu      sync.Mutex
	replies []*sdk.ElicitResult
}

func (l *formLog) last() *sdk.ElicitResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.replies) == 0 {
		return nil
	}
	return l.replies[len(l.replies)-1]
}

// elicitServer starts an HTTP server whose tool "ask" asks for the form
// schema and reports the action it got back; the raw replies are in the
// log.
func elicitServer(t *testing.T, schema string) (string, *formLog) {
	t.Helper()
	log := &formLog{}
	url, _ := httpServer(t, func(s *sdk.Server) {
		s.AddSendingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				res, err := next(ctx, method, req)
				if r, ok := res.(*sdk.ElicitResult); ok && err == nil {
					c := *r
					c.Content = maps.Clone(r.Content)
					log.mu.Lock()
					log.replies = append(log.replies, &c)
					log.mu.Unlock()
				}
				return res, err
			}
		})
		sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "Ask the user for their profile."},
			func(ctx context.Context, req *sdk.CallToolRequest, _ noIn) (*sdk.CallToolResult, any, error) {
				res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your profile, please.", RequestedSchema: json.RawMessage(schema)})
				if err != nil {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "elicit failed: " + err.Error()}}, IsError: true}, nil, nil
				}
				return textResult("action=" + res.Action), nil, nil
			})
	})
	return url, log
}

func connectElicit(t *testing.T, url string, sc ServerConfig, elicit func(context.Context, Form) (Reply, error)) *Manager {
	t.Helper()
	sc.URL = url
	m := newManager(t, map[string]ServerConfig{"forms": sc}, Options{Elicit: elicit})
	if err := m.Connect(context.Background(), "forms"); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestElicitAppliesDefaultsForOmittedFields(t *testing.T) {
	url, log := elicitServer(t, profileSchema)
	var got Form
	m := connectElicit(t, url, ServerConfig{}, func(_ context.Context, f Form) (Reply, error) {
		got = f
		return Reply{Action: ActionAccept, Content: map[string]any{"email": "ada@example.com"}}, nil
	})
	out, isErr := run(t, m, "mcp__forms__ask", `{}`)
	if isErr || out != "action=accept" {
		t.Fatalf("the call gave %q (error %v)", out, isErr)
	}
	if got.Server != "forms" || got.Message != "Your profile, please." || len(got.Fields) != 8 {
		t.Fatalf("the form reached the host as %+v", got)
	}
	sent := log.last().Content
	want := map[string]any{"email": "ada@example.com", "name": "John Doe", "age": float64(30), "score": 95.5,
		"status": "active", "tags": []any{"a"}, "verified": true}
	b1, _ := json.Marshal(sent)
	b2, _ := json.Marshal(want)
	if string(b1) != string(b2) {
		t.Errorf("the server got %s, want %s (the defaults of the fields left out)", b1, b2)
	}
}

func TestElicitRequiredFieldWithDefaultMayBeLeftOut(t *testing.T) {
	// The SDK checks the answers against the schema before it would apply
	// defaults: "name" is required, so it must be filled in first.
	url, log := elicitServer(t, `{"type":"object","properties":{"name":{"type":"string","default":"Ada"}},"required":["name"]}`)
	m := connectElicit(t, url, ServerConfig{}, func(context.Context, Form) (Reply, error) {
		return Reply{Action: ActionAccept}, nil
	})
	if out, isErr := run(t, m, "mcp__forms__ask", `{}`); isErr || out != "action=accept" {
		t.Fatalf("the call gave %q", out)
	}
	if got := log.last().Content["name"]; got != "Ada" {
		t.Errorf("name = %v, want the default Ada", got)
	}
}

func TestElicitWithoutAHostDeclines(t *testing.T) {
	url, _ := elicitServer(t, profileSchema)
	m := connectElicit(t, url, ServerConfig{}, nil)
	if out, _ := run(t, m, "mcp__forms__ask", `{}`); out != "action=decline" {
		t.Errorf("without Options.Elicit the call gave %q, want a decline", out)
	}
}

func TestElicitDeclinesAnswersThatDoNotFit(t *testing.T) {
	url, log := elicitServer(t, profileSchema)
	m := connectElicit(t, url, ServerConfig{}, func(context.Context, Form) (Reply, error) {
		return Reply{Action: ActionAccept, Content: map[string]any{"email": "ada@example.com", "age": "old"}}, nil
	})
	if out, _ := run(t, m, "mcp__forms__ask", `{}`); out != "action=decline" {
		t.Errorf("an answer that does not fit gave %q, want a decline", out)
	}
	if c := log.last().Content; c != nil {
		t.Errorf("the declined form still sent %v", c)
	}
}

func TestElicitPausesTheCallTimeout(t *testing.T) {
	url, _ := elicitServer(t, profileSchema)
	m := connectElicit(t, url, ServerConfig{Timeout: 0.3}, func(context.Context, Form) (Reply, error) {
		time.Sleep(800 * time.Millisecond) // the user takes their time
		return Reply{Action: ActionAccept, Content: map[string]any{"email": "ada@example.com"}}, nil
	})
	if out, isErr := run(t, m, "mcp__forms__ask", `{}`); isErr || out != "action=accept" {
		t.Errorf("a form answered after the call timeout gave %q", out)
	}
}

func TestElicitIsWithdrawnWhenTheCallStops(t *testing.T) {
	url, _ := elicitServer(t, profileSchema)
	asked := make(chan struct{})
	withdrawn := make(chan struct{})
	m := connectElicit(t, url, ServerConfig{}, func(ctx context.Context, _ Form) (Reply, error) {
		close(asked)
		<-ctx.Done()
		close(withdrawn)
		return Reply{}, ctx.Err()
	})
	tl, _ := m.Lookup("mcp__forms__ask")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-asked; cancel() }()
	res := tl.Run(ctx, nil, json.RawMessage(`{}`))
	if !res.IsError || !strings.Contains(res.Content, "cancelled") {
		t.Errorf("the stopped call gave %q", res.Content)
	}
	select {
	case <-withdrawn:
	case <-time.After(10 * time.Second):
		t.Fatal("the form still waited after its call stopped")
	}
}

func TestCallElicits(t *testing.T) {
	url, log := elicitServer(t, profileSchema)
	res, err := Call(context.Background(), "forms", ServerConfig{URL: url}, Options{Elicit: func(_ context.Context, f Form) (Reply, error) {
		return Reply{Action: ActionAccept, Content: map[string]any{"email": "ada@example.com"}}, nil
	}}, "ask", nil)
	if err != nil || res.Content != "action=accept" {
		t.Fatalf("Call gave %q, %v", res.Content, err)
	}
	if log.last().Content["name"] != "John Doe" {
		t.Errorf("mcp.Call sent %v", log.last().Content)
	}
}

func TestFormChecksAnswers(t *testing.T) {
	f, err := parseForm("s", "m", json.RawMessage(profileSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		content map[string]any
		want    string
	}{
		{map[string]any{}, `"email" is required`},
		{map[string]any{"email": "not an address"}, `"email" must be an email address`},
		{map[string]any{"email": "a@b.c", "age": 200.0}, `"age" must be between 0 and 150`},
		{map[string]any{"email": "a@b.c", "age": 2.5}, `"age" must be a whole number`},
		{map[string]any{"email": "a@b.c", "status": "gone"}, `"status" must be one of: active, inactive, pending`},
		{map[string]any{"email": "a@b.c", "plan": "gold"}, `"plan" must be one of: Free, Pro`},
		{map[string]any{"email": "a@b.c", "tags": []any{"a", "z"}}, `"tags" takes only these choices`},
		{map[string]any{"email": "a@b.c", "verified": "yes"}, `"verified" must be yes or no`},
		{map[string]any{"email": "a@b.c", "color": "red"}, `the form has no field "color"`},
	} {
		_, err := f.Accept(c.content)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Accept(%v) = %v, want %q", c.content, err, c.want)
		}
	}
	if _, err := f.AcceptDefaults(); err == nil || !strings.Contains(err.Error(), `"email" is required and has no default`) {
		t.Errorf("AcceptDefaults = %v", err)
	}
}

func TestFieldParsesTypedAnswers(t *testing.T) {
	f, err := parseForm("s", "m", json.RawMessage(profileSchema))
	if err != nil {
		t.Fatal(err)
	}
	field := map[string]Field{}
	for _, fd := range f.Fields {
		field[fd.Name] = fd
	}
	for _, c := range []struct {
		name, in string
		want     any
	}{
		{"age", " 42 ", int64(42)},
		{"age", "42.0", int64(42)},
		{"score", "1e2", 100.0},
		{"verified", "N", false},
		{"status", "2", "inactive"},
		{"status", "PENDING", "pending"},
		{"plan", "Pro", "pro"},
		{"tags", "c, 1", []string{"c", "a"}},
		{"name", "", nil},
	} {
		got, err := field[c.name].Parse(c.in)
		if err != nil || !sameValue(got, c.want) {
			t.Errorf("%s.Parse(%q) = %#v, %v; want %#v", c.name, c.in, got, err, c.want)
		}
	}
	if fd := field["plan"]; fd.Kind != KindChoice || fd.Choices[1] != (Choice{Value: "pro", Title: "Pro"}) {
		t.Errorf("the titled enum became %+v", fd)
	}
	if _, err := field["age"].Parse("old"); err == nil || err.Error() != `"age" must be a whole number, such as 3` {
		t.Errorf("a word for a number gave %v", err)
	}
	if got := field["tags"].Text(field["tags"].Default); got != "a" {
		t.Errorf("the default's text is %q", got)
	}
}

func sameValue(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestParseFormRefusesWhatItCannotShow(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"object","properties":{"x":{"type":"object"}}}`: `field "x" has type "object"`,
		`{"type":"array"}`: `has type "array" where an object is needed`,
		`{"type":"object","properties":{"x":{"type":"string","enum":[1,2]}}}`:     `field "x" has a choice that is not text`,
		`{"type":"object","properties":{"x":{"type":"array"}}}`:                   `field "x" is a list without items`,
		`{"type":"object","properties":{"x":{"type":["string","number"]}}}`:       `field "x" may be any of 2 types`,
		`{"type":"object","properties":{"x":{"type":"integer","default":"ten"}}}`: ``,
	} {
		f, err := parseForm("s", "m", json.RawMessage(schema))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", schema, err)
		case want == "" && f.Fields[0].Default != nil:
			t.Errorf("%s: a default that does not fit was kept: %v", schema, f.Fields[0].Default)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: got %v, want %q", schema, err, want)
		}
	}
}
