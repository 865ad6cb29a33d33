package workbench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/secrets/secretstest"
	"github.com/tally-dev/tally/engine/transcript"
)

func TestExportDocumentIsReadableAndRedacted(t *testing.T) {
	w := bench(t, nil)
	newSession(t, w, "s", "deepseek-chat")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	key := secretstest.New(7).GitHubPAT
	edit := transcript.ToolCall{ID: "c1", Name: "edit_file", Arguments: `{"path":"calc.go","old_string":"return a - b","new_string":"return a + b"}`}
	shell := transcript.ToolCall{ID: "c2", Name: "run_shell", Arguments: `{"command":"go test ./..."}`}
	appendMessage(t, w, "s", 1, transcript.UserText("", "fix the <b>sum</b>; my token is "+key, at))
	appendMessage(t, w, "s", 1, transcript.AssistantReply("Fixing it.", "", []transcript.ToolCall{edit, shell}, at))
	appendMessage(t, w, "s", 1, transcript.ToolResult(edit, "replaced 1 occurrence", false, at))
	appendMessage(t, w, "s", 1, transcript.ToolResult(shell, "FAIL: TestSum", true, at))
	supersede(t, w, "s", 1, "compaction", []transcript.Superseded{{Index: 0, Message: transcript.AssistantReply("an old answer", "", nil, at)}})
	appendMessage(t, w, "s", 2, transcript.UserText("", "second cycle question", at))

	var md bytes.Buffer
	if err := w.ExportDocument("s", FormatMarkdown, &md); err != nil {
		t.Fatal(err)
	}
	doc := md.String()
	for _, want := range []string{"## Cycle 1", "## Cycle 2", "### You", "### Tally", "Fixing it.", "<summary>edit_file calc.go</summary>",
		"```diff\n-return a - b\n+return a + b", "<summary>run_shell: go test ./... — failed</summary>", "FAIL: TestSum",
		"an old answer", "(replaced by compaction)", "second cycle question"} {
		if !strings.Contains(doc, want) {
			t.Errorf("markdown lacks %q:\n%s", want, doc)
		}
	}
	var h bytes.Buffer
	if err := w.ExportDocument("s", FormatHTML, &h); err != nil {
		t.Fatal(err)
	}
	page := h.String()
	for _, want := range []string{"<!doctype html>", `<span class="del">-return a - b</span>`, `<span class="add">+return a + b</span>`,
		"fix the &lt;b&gt;sum&lt;/b&gt;", `data-gone="compaction"`, `class="call failed"`} {
		if !strings.Contains(page, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	for name, out := range map[string]string{"md": doc, "html": page} {
		if strings.Contains(out, key) {
			t.Errorf("the %s export holds the token", name)
		}
	}
	if strings.Contains(page, "<b>sum</b>") {
		t.Error("the html export does not escape the user's text")
	}
	if err := w.ExportDocument("s", "pdf", &h); err == nil || !strings.Contains(err.Error(), "use jsonl, md or html") {
		t.Fatalf("unknown format: %v", err)
	}
}

// TestMarkdownExportEscapesHTMLTheModelWrote is the regression test for
// the Markdown export writing the model's raw <script> and <iframe>, which
// a viewer that renders HTML in Markdown would run; code keeps its text.
func TestMarkdownExportEscapesHTMLTheModelWrote(t *testing.T) {
	w := bench(t, nil)
	newSession(t, w, "s", "deepseek-chat")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	appendMessage(t, w, "s", 1, transcript.UserText("", "show me <iframe src=x>", at))
	reply := "Here: <script>steal()</script> and `a<b` inline.\n\n```go\nif a < b { return }\n```\n"
	appendMessage(t, w, "s", 1, transcript.AssistantReply(reply, "", nil, at))
	var md bytes.Buffer
	if err := w.ExportDocument("s", FormatMarkdown, &md); err != nil {
		t.Fatal(err)
	}
	doc := md.String()
	for _, bad := range []string{"<script>", "<iframe"} {
		if strings.Contains(doc, bad) {
			t.Errorf("the markdown holds %s:\n%s", bad, doc)
		}
	}
	for _, want := range []string{"&lt;script>steal()&lt;/script>", "`a<b`", "if a < b { return }", "&lt;iframe src=x>"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, doc)
		}
	}
}

// TestHTMLExportRendersAnswersAndWrites: an answer's Markdown is rendered
// (a table is a table), raw HTML the model wrote is dropped, and a
// write_file call shows the file it wrote as added lines.
func TestHTMLExportRendersAnswersAndWrites(t *testing.T) {
	w := bench(t, nil)
	newSession(t, w, "s", "deepseek-chat")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	write := transcript.ToolCall{ID: "w1", Name: "write_file", Arguments: `{"path":"notes.md","content":"first line\nsecond line\n"}`}
	appendMessage(t, w, "s", 1, transcript.UserText("", "tabulate", at))
	appendMessage(t, w, "s", 1, transcript.AssistantReply("Writing notes.", "", []transcript.ToolCall{write}, at))
	appendMessage(t, w, "s", 1, transcript.ToolResult(write, "created notes.md (2 lines)", false, at))
	reply := "| op | result |\n| --- | --- |\n| add | **ok** |\n\n<script>steal()</script> [x](javascript:alert(1))\n"
	appendMessage(t, w, "s", 1, transcript.AssistantReply(reply, "", nil, at))
	var h bytes.Buffer
	if err := w.ExportDocument("s", FormatHTML, &h); err != nil {
		t.Fatal(err)
	}
	page := h.String()
	for _, want := range []string{"<table>", "<th>op</th>", "<strong>ok</strong>", "write_file notes.md (the whole file)",
		`<span class="add">+first line</span>`, `<span class="add">+second line</span>`, "created notes.md (2 lines)"} {
		if !strings.Contains(page, want) {
			t.Errorf("html lacks %q:\n%s", want, page)
		}
	}
	for _, bad := range []string{"<script>", "javascript:", "| op |", `<span class="del">`} {
		if strings.Contains(page, bad) {
			t.Errorf("html holds %q:\n%s", bad, page)
		}
	}
}
