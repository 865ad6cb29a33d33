package command

import (
	"strings"
	"testing"
)

func TestExpandTemplate(t *testing.T) {
	for _, tc := range []struct{ body, rest, want string }{
		{"Do $1 then $2.", ` a "b c" d`, "Do a then b c."},
		{"All: $ARGUMENTS.", `  x  "y z" `, `All: x  "y z".`},
		{"Costs $10 or $1.", "five", "Costs $10 or five."},
		{"Only $3.", "a b", "Only ."},
		{"No placeholder.\n\n", "", "No placeholder.\n\n"},
		{"No placeholder.\n", "the args", "No placeholder.\n\nthe args"},
		{"$1 and @docs:x", "@docs:mem://a b", "b and @docs:x"},
	} {
		skip := func(w string) bool { return strings.HasPrefix(w, "@docs:") }
		got, err := expandTemplate(Command{Name: "t", body: tc.body}, tc.rest, skip)
		if err != nil || got != tc.want {
			t.Errorf("%q with %q: %q, %v; want %q", tc.body, tc.rest, got, err, tc.want)
		}
	}
	if _, err := expandTemplate(Command{Name: "t", body: "$1"}, `"open`, nil); err == nil || !strings.Contains(err.Error(), "the arguments of /t leave a \" quote open") {
		t.Errorf("an open quote: %v", err)
	}
	if got, err := expandTemplate(Command{Name: "t", body: "$ARGUMENTS"}, `"open`, nil); err != nil || got != `"open` {
		t.Errorf("$ARGUMENTS takes the text as typed: %q, %v", got, err)
	}
}

func TestCommandHeaderAsClaudeCodeWritesIt(t *testing.T) {
	for in, want := range map[string][2]string{
		"---\nargument-hint: [message]\n---\nb":                                    {"", "[message]"},
		"---\nargument-hint: [pr-number] [priority]\n---\nb":                       {"", "[pr-number] [priority]"},
		"---\ndescription: Fix: the bug\nargument-hint: <file>\n---\nb":            {"Fix: the bug", "<file>"},
		"---\r\ndescription: \"Quoted: yes\"\r\nallowed-tools: [a, b]\r\n---\r\nb": {"Quoted: yes", ""},
		"\ufeff---\ndescription: 42\n---\nb":                                       {"42", ""},
	} {
		h, body, err := parseCommandHeader([]byte(in))
		if err != nil || string(h.Description) != want[0] || string(h.ArgumentHint) != want[1] || body != "b" {
			t.Errorf("%q: %+v %q %v", in, h, body, err)
		}
	}
}

func TestBindArgs(t *testing.T) {
	c := Command{Name: "s:p", Args: []Arg{{Name: "a", Required: true}, {Name: "b"}, {Name: "c"}}}
	c.Hint = hintOf(c.Args)
	for in, want := range map[string]string{
		`x y z`:             "a=x b=y c=z",
		`b=2 x`:             "a=x b=2",
		`"one two" c='3 4'`: "a=one two c=3 4",
		`x y z and more`:    "a=x b=y c=z and more",
		`a="say \"hi\""`:    `a=say "hi"`,
		`x d=4`:             "a=x b=d=4",
		`  x  `:             "a=x",
	} {
		got, err := BindArgs(c, in, nil)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		var parts []string
		for _, k := range []string{"a", "b", "c"} {
			if v, ok := got[k]; ok {
				parts = append(parts, k+"="+v)
			}
		}
		if s := strings.Join(parts, " "); s != want {
			t.Errorf("%s: %s; want %s", in, s, want)
		}
	}
	if _, err := BindArgs(c, "b=1", nil); err == nil || err.Error() != "the command /s:p needs the argument a; usage: /s:p <a> [b] [c]" {
		t.Errorf("missing: %v", err)
	}
}
