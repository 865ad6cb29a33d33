package workbench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/internal/text"
	"github.com/tally-dev/tally/storage"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// Formats of ExportDocument.
const (
	FormatJSONL    = "jsonl"
	FormatMarkdown = "md"
	FormatHTML     = "html"
)

// docEntry is one thing a shared transcript shows.
type docEntry struct {
	kind  string // "cycle", "superseded", "user", "answer", "call", "note"
	title string
	text  string
	diff  bool // text is a diff
	err   bool
	gone  string // the rebuild that superseded it
}

// ExportDocument writes the whole history of session id as a document
// to share (format FormatMarkdown or FormatHTML; FormatJSONL is Export's
// lines): every prompt and answer in order, each tool call folded with
// its result, edits as coloured diffs, messages a compaction or purge
// replaced marked as such, and each cycle headed. Every text is redacted
// again (see secrets.Redact), so a secret that slipped past intake does
// not reach the reader. A session that does not exist is an error
// matching ErrNotFound.
func (w *Workbench) ExportDocument(id, format string, out io.Writer) error {
	if format == "" || format == FormatJSONL {
		return w.Export(id, func(line []byte) error { _, err := out.Write(line); return err })
	}
	if format != FormatMarkdown && format != FormatHTML {
		return fmt.Errorf("the export format %q is not known; use jsonl, md or html", format)
	}
	var meta storage.Session
	if err := w.store.View(func(tx *storage.Tx) error {
		var err error
		meta, err = tx.Session(id)
		return err
	}); err != nil {
		return err
	}
	lines, readErr := w.exportLines(id)
	entries := docEntries(lines)
	bw := bufio.NewWriter(out)
	if format == FormatMarkdown {
		writeMarkdown(bw, meta, entries)
	} else {
		writeHTML(bw, meta, entries)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return readErr
}

// docEntries turns the export lines into the document's entries, in the
// order of the session's history: a tool call shows the result first
// appended for it (what the agent saw then), not a later shortened copy.
func docEntries(lines []ExportLine) []docEntry {
	var out []docEntry
	cycle := 0
	type result struct {
		m       transcript.Message
		written bool // a rewrite wrote it (a cleared copy)
	}
	results := map[string]result{}
	for _, l := range lines {
		if l.Message.Role != transcript.Tool {
			continue
		}
		key := fmt.Sprintf("%d/%s", l.Cycle, l.Message.ToolCallID)
		if r, seen := results[key]; !seen || (r.written && l.WrittenBy == "") {
			results[key] = result{l.Message, l.WrittenBy != ""}
		}
	}
	for _, l := range lines {
		if l.Cycle != cycle {
			cycle = l.Cycle
			out = append(out, docEntry{kind: "cycle", title: fmt.Sprintf("Cycle %d", cycle)})
		}
		if r := l.Rewrite; r != nil {
			out = append(out, docEntry{kind: "rewrite", title: fmt.Sprintf("%s: %s → %s tokens (%s)", r.Reason,
				text.Thousands(r.TokensBefore), text.Thousands(r.TokensAfter), r.Time.UTC().Format("2006-01-02 15:04 UTC"))})
			continue
		}
		m := l.Message
		switch {
		case m.Kind == transcript.KindStatus || m.Kind == transcript.KindAck || m.Role == transcript.Tool:
			continue // engine bookkeeping; results are shown with their calls
		case l.WrittenBy != "" && m.Kind != transcript.KindSeed:
			out = append(out, docEntry{kind: "note", title: "Written by the " + l.WrittenBy, text: clean(m.Text()), gone: l.SupersededBy})
		case m.Kind == transcript.KindSeed:
			out = append(out, docEntry{kind: "note", title: "Handed over from the previous cycle", text: clean(m.Text()), gone: l.SupersededBy})
		case m.Kind == transcript.KindDiagnostics || m.Kind == transcript.KindReminder || m.Kind == transcript.KindRepair || m.Kind == transcript.KindAttachment:
			out = append(out, docEntry{kind: "note", title: strings.ToUpper(string(m.Kind[:1])) + string(m.Kind[1:]), text: clean(m.Text()), gone: l.SupersededBy})
		case m.Role == transcript.User:
			out = append(out, docEntry{kind: "user", title: "You", text: clean(userText(m)), gone: l.SupersededBy})
		case m.Role == transcript.Assistant:
			if t := clean(m.Text()); t != "" {
				out = append(out, docEntry{kind: "answer", title: "Tally", text: t, gone: l.SupersededBy})
			}
			for _, c := range m.ToolCalls {
				out = append(out, callEntry(c, results[fmt.Sprintf("%d/%s", l.Cycle, c.ID)].m, l.SupersededBy))
			}
		}
	}
	return out
}

// userText is what the user wrote, without the engine's turn metadata.
func userText(m transcript.Message) string {
	var parts []string
	for _, b := range m.Blocks {
		switch b.Type {
		case transcript.BlockTurnMeta:
		case transcript.BlockImage:
			parts = append(parts, imageLine(b.Image))
		default:
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// callEntry is a tool call with its result; an edit shows as a diff.
func callEntry(c transcript.ToolCall, res transcript.Message, gone string) docEntry {
	var args map[string]any
	_ = json.Unmarshal([]byte(c.Arguments), &args)
	str := func(k string) string { s, _ := args[k].(string); return s }
	e := docEntry{kind: "call", gone: gone, err: res.IsError}
	result := clean(res.Text())
	switch c.Name {
	case "edit_file":
		e.title = "edit_file " + str("path")
		e.text, e.diff = clean(editDiff(str("old_string"), str("new_string"))), true
		if result != "" {
			e.text += "\n\n" + result
		}
		return e
	case "write_file":
		e.title = "write_file " + str("path") + " (the whole file)"
		e.text, e.diff = clean(editDiff("", str("content"))), true
		if result != "" {
			e.text += "\n\n" + result
		}
		return e
	case "run_shell":
		e.title = "run_shell: " + str("command")
	default:
		e.title = c.Name + " " + clean(c.Arguments)
	}
	if len(e.title) > 200 {
		e.title = e.title[:200] + "…"
	}
	e.text = result
	e.diff = looksLikeDiff(result)
	return e
}

// editDiff shows a replacement as removed and added lines.
func editDiff(old, new string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(old, "\n"), "\n") {
		if old != "" {
			b.WriteString("-" + l + "\n")
		}
	}
	for _, l := range strings.Split(strings.TrimRight(new, "\n"), "\n") {
		b.WriteString("+" + l + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func looksLikeDiff(s string) bool {
	return strings.Contains(s, "\n@@ ") || strings.HasPrefix(s, "--- ") || strings.HasPrefix(s, "diff --git")
}

// clean is text redacted again for the reader.
func clean(s string) string {
	out, _ := secrets.Redact(s)
	return strings.TrimSpace(out)
}

func writeMarkdown(w *bufio.Writer, meta storage.Session, entries []docEntry) {
	fmt.Fprintf(w, "# %s\n\nSession `%s` · workspace `%s` · model `%s` · created %s\n",
		markdownText(oneLineText(meta.Title)), meta.ID, meta.Workspace, meta.Model, meta.Created.UTC().Format("2006-01-02 15:04 UTC"))
	fence := func(s, lang string) string {
		f := "```"
		for strings.Contains(s, f) {
			f += "`"
		}
		return f + lang + "\n" + s + "\n" + f
	}
	for _, e := range entries {
		mark := ""
		if e.gone != "" {
			mark = fmt.Sprintf(" *(replaced by %s)*", e.gone)
		}
		switch e.kind {
		case "cycle":
			fmt.Fprintf(w, "\n## %s\n", e.title)
		case "rewrite":
			fmt.Fprintf(w, "\n---\n*%s*\n", markdownText(e.title))
		case "user", "answer":
			fmt.Fprintf(w, "\n### %s%s\n\n%s\n", e.title, mark, markdownText(e.text))
		case "note":
			fmt.Fprintf(w, "\n<details><summary>%s%s</summary>\n\n%s\n\n</details>\n", html.EscapeString(e.title), mark, fence(e.text, ""))
		case "call":
			status := ""
			if e.err {
				status = " — failed"
			}
			lang := ""
			if e.diff {
				lang = "diff"
			}
			fmt.Fprintf(w, "\n<details><summary>%s%s%s</summary>\n\n%s\n\n</details>\n", html.EscapeString(oneLineText(e.title)), status, mark, fence(e.text, lang))
		}
	}
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// docCSS styles the HTML document; it is the whole of its styling.
const docCSS = `body{font:15px/1.5 system-ui,sans-serif;max-width:52em;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;margin-top:2em}.meta{color:#666}
.msg{margin:1em 0}.who{font-weight:600}.user{background:#eef4ff;padding:.5em .8em;border-radius:6px}
.text{white-space:pre-wrap}.md table{border-collapse:collapse}.md td,.md th{border:1px solid #ccc;padding:.2em .5em}.md code{background:#f4f4f4}.rewrite{color:#666;border-top:1px dashed #bbb;padding-top:.4em}.gone{opacity:.6}.gone .who::after{content:" (replaced by " attr(data-gone) ")";font-weight:400}
details{margin:.4em 0;border:1px solid #ddd;border-radius:6px;padding:.3em .6em}summary{cursor:pointer;font-family:monospace}
.failed summary{color:#b00}pre{white-space:pre-wrap;font:13px/1.4 monospace;margin:.4em 0}
.add{background:#e6ffec;display:block}.del{background:#ffebe9;display:block}.hunk{color:#0550ae;display:block}`

func writeHTML(w *bufio.Writer, meta storage.Session, entries []docEntry) {
	esc := html.EscapeString
	fmt.Fprintf(w, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style></head><body>\n", esc(meta.Title), docCSS)
	fmt.Fprintf(w, "<h1>%s</h1>\n<p class=\"meta\">Session <code>%s</code> · workspace <code>%s</code> · model <code>%s</code> · created %s</p>\n",
		esc(meta.Title), esc(meta.ID), esc(meta.Workspace), esc(meta.Model), meta.Created.UTC().Format("2006-01-02 15:04 UTC"))
	for _, e := range entries {
		gone := ""
		if e.gone != "" {
			gone = fmt.Sprintf(" gone\" data-gone=\"%s", esc(e.gone))
		}
		switch e.kind {
		case "cycle":
			fmt.Fprintf(w, "<h2>%s</h2>\n", esc(e.title))
		case "rewrite":
			fmt.Fprintf(w, "<p class=\"rewrite\">%s</p>\n", esc(e.title))
		case "user":
			fmt.Fprintf(w, "<div class=\"msg %s%s\"><div class=\"who\">%s</div><div class=\"text\">%s</div></div>\n", e.kind, gone, esc(e.title), esc(e.text))
		case "answer":
			fmt.Fprintf(w, "<div class=\"msg %s%s\"><div class=\"who\">%s</div><div class=\"md\">%s</div></div>\n", e.kind, gone, esc(e.title), markdownHTML(e.text))
		case "note", "call":
			cls := e.kind
			if e.err {
				cls += " failed"
			}
			fmt.Fprintf(w, "<details class=\"%s%s\"><summary>%s</summary><pre>%s</pre></details>\n", cls, gone, esc(oneLineText(e.title)), htmlBody(e.text, e.diff))
		}
	}
	w.WriteString("</body></html>\n")
}

// htmlBody is a result escaped, its diff lines coloured.
func htmlBody(s string, diff bool) string {
	if !diff {
		return html.EscapeString(s)
	}
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		cls := ""
		switch {
		case strings.HasPrefix(l, "@@"):
			cls = "hunk"
		case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++"):
			cls = "add"
		case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"):
			cls = "del"
		}
		if cls == "" {
			b.WriteString(html.EscapeString(l) + "\n")
		} else {
			fmt.Fprintf(&b, "<span class=\"%s\">%s</span>", cls, html.EscapeString(l))
		}
	}
	return b.String()
}

// imageLine stands for a picture in an exported document (the bytes stay
// in the store): "[image: shot.png, PNG, 800×600, 12 KB]".
func imageLine(r transcript.ImageRef) string {
	info := images.Info{MediaType: r.MediaType, Width: r.Width, Height: r.Height, Size: r.Size}
	if r.Name == "" {
		return "[image: " + info.String() + "]"
	}
	return "[image: " + r.Name + ", " + info.String() + "]"
}

// markdownText is model or user text for the Markdown document: every "<"
// outside fenced code blocks and code spans becomes "&lt;", so a viewer
// that renders HTML in Markdown runs no <script> and shows no <iframe>
// the model wrote, while code reads as written.
func markdownText(s string) string {
	var b strings.Builder
	fence := ""
	for _, line := range strings.SplitAfter(s, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			b.WriteString(line)
			if strings.HasPrefix(trimmed, fence) && strings.Trim(strings.TrimSpace(trimmed), fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOf(trimmed); f != "" && len(line)-len(trimmed) < 4 {
			fence = f
			b.WriteString(line)
			continue
		}
		b.WriteString(escapeOutsideSpans(line))
	}
	return b.String()
}

// fenceOf returns the fence a line opens (``` or ~~~, or longer), "" for
// none.
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// escapeOutsideSpans replaces "<" with "&lt;" except inside code spans
// (a run of backticks to the next run of the same length).
func escapeOutsideSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] == '`' {
			n := 0
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			tick := strings.Repeat("`", n)
			if end := strings.Index(line[i+n:], tick); end >= 0 {
				b.WriteString(line[i : i+n+end+n])
				i += n + end + n
				continue
			}
			b.WriteString(tick)
			i += n
			continue
		}
		if line[i] == '<' {
			b.WriteString("&lt;")
		} else {
			b.WriteByte(line[i])
		}
		i++
	}
	return b.String()
}

// answerMarkdown renders a model's answer for the HTML document: GitHub
// Markdown (tables, strikethrough, task lists) in goldmark's safe mode,
// which drops raw HTML and dangerous link targets, so nothing the model
// wrote runs in the reader's browser.
var answerMarkdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// markdownHTML is text rendered by answerMarkdown; text it cannot render
// is shown escaped as it is.
func markdownHTML(text string) string {
	var b strings.Builder
	if err := answerMarkdown.Convert([]byte(text), &b); err != nil {
		return "<div class=\"text\">" + html.EscapeString(text) + "</div>"
	}
	return b.String()
}
