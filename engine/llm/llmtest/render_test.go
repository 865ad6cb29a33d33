package llmtest

import (
	"strings"
	"testing"
)

const toolConversation = `{"model":"m","messages":[
 {"role":"system","content":"You are terse."},
 {"role":"user","content":"list files"},
 {"role":"assistant","content":"","reasoning_content":"need ls","tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"path\":\".\",\"all\":true}"}}]},
 {"role":"tool","tool_call_id":"c1","content":"a.go\nb.go"}
],"tools":[{"type":"function","function":{"name":"ls","description":"List files","parameters":{"type":"object","properties":{"path":{"type":"string"},"all":{"type":"boolean"}}}}}]}`

func mustParse(t *testing.T, body string) *parsed {
	t.Helper()
	p, err := parseRequest([]byte(body))
	if err != nil {
		t.Fatalf("parseRequest: %v", err)
	}
	return p
}

func TestRenderTemplatesIncludeToolsAndCalls(t *testing.T) {
	for _, name := range []string{TemplateQwen35, TemplateDeepSeekV4} {
		t.Run(name, func(t *testing.T) {
			rd := render(name, mustParse(t, toolConversation))
			t.Logf("%s", rd.text)
			if rd.fellBack {
				t.Fatalf("template fell back: %s", rd.err)
			}
			for _, want := range []string{`"name":"ls"`, "List files", "You are terse.", "list files", "a.go\nb.go"} {
				if !strings.Contains(rd.text, want) && !strings.Contains(rd.text, strings.ReplaceAll(want, `":"`, `": "`)) {
					t.Errorf("rendered prompt lacks %q", want)
				}
			}
			if strings.Index(rd.text, "List files") > strings.Index(rd.text, "list files") {
				t.Errorf("tools are not rendered before the conversation")
			}
		})
	}
}
