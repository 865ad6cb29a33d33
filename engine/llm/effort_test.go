package llm

import (
	"context"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
)

// efforts is an EffortSource with one level per role.
type efforts map[string]Effort

func (e efforts) Effort(_, role string) Effort { return e[role] }

// TestEffortReachesTheBodyPerProvider sends each level in each dialect to
// the scripted server over real HTTP and reads the members the body
// carried, and checks that the messages' bytes do not change with it.
func TestEffortReachesTheBodyPerProvider(t *testing.T) {
	cases := []struct {
		dialect Dialect
		effort  Effort
		want    []string // members the body must carry
		not     []string // members it must not
	}{
		{DialectOpenAI, EffortHigh, []string{`"reasoning_effort":"high"`}, []string{`thinking`, `chat_template_kwargs`}},
		{DialectOpenAI, EffortOff, []string{`"reasoning_effort":"none"`}, nil},
		{DialectOpenAI, EffortMax, []string{`"reasoning_effort":"xhigh"`}, nil},
		{DialectDeepSeek, EffortOff, []string{`"thinking":{"type":"disabled"}`}, []string{`reasoning_effort`}},
		{DialectDeepSeek, EffortLow, []string{`"thinking":{"type":"enabled"}`, `"reasoning_effort":"low"`}, nil},
		{DialectDeepSeek, EffortMax, []string{`"thinking":{"type":"enabled"}`, `"reasoning_effort":"max"`}, nil},
		{DialectTemplate, EffortOff, []string{`"chat_template_kwargs":{"enable_thinking":false}`}, []string{`"reasoning_effort"`}},
		{DialectTemplate, EffortMedium, []string{`"enable_thinking":true`, `"reasoning_effort":"medium"`}, []string{`"thinking"`}},
		{DialectTemplate, EffortDefault, nil, []string{`thinking`, `reasoning_effort`}},
	}
	var messages string
	for _, c := range cases {
		srv := llmtest.New(llmtest.Sequence(llmtest.Text("ok")))
		rec := &recorder{}
		m := newModel(srv, rec, func(cfg *Config) { cfg.Dialect = c.dialect })
		req := userRequest("think about it")
		req.Effort = c.effort
		resp, err := m.Stream(context.Background(), req, rec.callbacks())
		if err != nil {
			t.Fatalf("%s %s: %v", c.dialect, c.effort, err)
		}
		if resp.Effort != c.effort {
			t.Errorf("%s %s: the response says effort %q", c.dialect, c.effort, resp.Effort)
		}
		got := srv.Requests()
		srv.Close()
		if len(got) != 1 || got[0].Status != 200 {
			t.Fatalf("%s %s: the server got %+v", c.dialect, c.effort, got)
		}
		body := string(got[0].Body)
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s %s: the body has no %s: %s", c.dialect, c.effort, w, body)
			}
		}
		for _, n := range c.not {
			if strings.Contains(body, n) {
				t.Errorf("%s %s: the body has %s: %s", c.dialect, c.effort, n, body)
			}
		}
		i, j := strings.Index(body, `"messages":[`), strings.Index(body, `}]`)
		if messages == "" {
			messages = body[i : j+2]
		} else if body[i:j+2] != messages {
			t.Errorf("%s %s: the messages' bytes changed with the effort:\n%s\n%s", c.dialect, c.effort, messages, body[i:j+2])
		}
	}
}

// TestEffortSourcePicksTheRole: a request naming no effort gets its
// role's level from the Config's source.
func TestEffortSourcePicksTheRole(t *testing.T) {
	srv := llmtest.New(llmtest.Sequence(llmtest.Text("a"), llmtest.Text("b")))
	defer srv.Close()
	rec := &recorder{}
	m := newModel(srv, rec, func(cfg *Config) {
		cfg.Dialect, cfg.Efforts = DialectOpenAI, efforts{"": EffortLow, "summary": EffortOff}
	})
	for _, role := range []string{"", "summary"} {
		req := userRequest("hi")
		req.Session, req.Role = "s1", role
		if _, err := m.Stream(context.Background(), req, rec.callbacks()); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Requests()
	if !strings.Contains(string(got[0].Body), `"reasoning_effort":"low"`) || !strings.Contains(string(got[1].Body), `"reasoning_effort":"none"`) {
		t.Errorf("the roles' levels did not reach the bodies:\n%s\n%s", got[0].Body, got[1].Body)
	}
}

func TestDialectFor(t *testing.T) {
	for url, want := range map[string]Dialect{
		"https://api.deepseek.com/v1":  DialectDeepSeek,
		"https://api.openai.com/v1":    DialectOpenAI,
		"https://openrouter.ai/api/v1": DialectOpenAI,
		"http://127.0.0.1:8080/v1":     DialectTemplate,
		"http://gpu-box:8000/v1":       DialectTemplate,
	} {
		if got := DialectFor(url); got != want {
			t.Errorf("DialectFor(%s) = %s, want %s", url, got, want)
		}
	}
	if _, err := ParseEffort("turbo"); err == nil {
		t.Error("ParseEffort took turbo")
	}
	if e, err := ParseEffort("Default"); err != nil || e != EffortDefault {
		t.Errorf("ParseEffort(Default) = %q, %v", e, err)
	}
}
