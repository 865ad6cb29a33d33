package cmdrule

import (
	"slices"
	"strings"
	"testing"
)

func TestParsePatterns(t *testing.T) {
	for _, tc := range []struct {
		kind    Kind
		in      string
		pattern string
		words   []string
		prefix  bool
	}{
		{Allow, "go test ./...", "go test ./...", []string{"go", "test", "./..."}, false},
		{Allow, "  go   test  ./...  ", "go test ./...", []string{"go", "test", "./..."}, false},
		{Allow, "npm run lint *", "npm run lint *", []string{"npm", "run", "lint"}, true},
		{Allow, "npm run lint:*", "npm run lint *", []string{"npm", "run", "lint"}, true},
		{Allow, "Bash(npm run lint:*)", "npm run lint *", []string{"npm", "run", "lint"}, true},
		{Allow, "npm run :*", "npm run *", []string{"npm", "run"}, true},
		{Allow, "'go' \"test\"", "go test", []string{"go", "test"}, false},
		{Allow, "git log --format=%H", "git log --format=%H", []string{"git", "log", "--format=%H"}, false},
		{Allow, `echo "it's" a\ b`, `echo 'it'\''s' 'a b'`, []string{"echo", "it's", "a b"}, false},
		{Allow, "go test '*.go'", "go test '*.go'", []string{"go", "test", "*.go"}, false},
		{Allow, "echo 'lint:*'", "echo 'lint:*'", []string{"echo", "lint:*"}, false},
		{Allow, "'if' x", "'if' x", []string{"if", "x"}, false},
		{Deny, "rm -rf ~", "rm -rf '~'", []string{"rm", "-rf", "~"}, false},
		{Deny, "bash *", "bash *", []string{"bash"}, true},
		{Deny, "git push --force:*", "git push --force *", []string{"git", "push", "--force"}, true},
	} {
		r, err := Parse(tc.kind, tc.in)
		if err != nil {
			t.Errorf("Parse(%v, %q): %v", tc.kind, tc.in, err)
			continue
		}
		if r.Pattern() != tc.pattern || !slices.Equal(r.Words(), tc.words) || r.Prefix() != tc.prefix || r.Kind() != tc.kind {
			t.Errorf("Parse(%v, %q) = %q %q prefix %v; want %q %q prefix %v", tc.kind, tc.in, r.Pattern(), r.Words(), r.Prefix(), tc.pattern, tc.words, tc.prefix)
		}
		// The canonical pattern reads back to the same rule (a deny
		// rule's ~ comes back quoted, the same word).
		again, err := Parse(tc.kind, r.Pattern())
		if err != nil || again.Pattern() != r.Pattern() || !slices.Equal(again.Words(), r.Words()) || again.Prefix() != r.Prefix() {
			t.Errorf("Parse(%q) again = %q, %v; want the same rule", r.Pattern(), again.Pattern(), err)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		in   string
		want string
	}{
		{Allow, "", "empty"},
		{Allow, "   ", "empty"},
		{Allow, "*", "every command"},
		{Deny, "*", "every command"},
		{Allow, ":*", "every command"},
		{Allow, "go test; rm -rf ~", "more than one command"},
		{Allow, "go test && rm x", "not a simple command"},
		{Allow, "go test | sh", "not a simple command"},
		{Allow, "go test\nrm x", "control or invisible"},
		{Allow, "go test $(curl x)", "would expand"},
		{Allow, "go test `curl x`", "would expand"},
		{Allow, "go test $HOME", "would expand"},
		{Allow, "go test *.go", "would expand"},
		{Allow, "ls ~", "would expand"},
		{Allow, "echo {a,b}", "would expand"},
		{Allow, "go * test", "only end a pattern"},
		{Allow, "go test > out.txt", "redirection"},
		{Allow, "FOO=1 go test", "sets a variable"},
		{Allow, "(go test)", "not a simple command"},
		{Allow, "go test &", "background"},
		{Allow, "! go test", "starts with !"},
		{Allow, "go test 'unclosed", "not valid shell"},
		{Allow, "bash -c 'go test'", "any command run through it"},
		{Allow, "sudo *", "any command run through it"},
		{Allow, "/usr/bin/env go test", "any command run through it"},
		{Allow, "eval go test", "any command run through it"},
		{Allow, "go\ttest", "control or invisible"},
		{Allow, "go\u200btest", "control or invisible"},
		{Allow, "go test \xff", "UTF-8"},
		{Allow, "go test " + strings.Repeat("x", MaxPattern), "over the limit"},
	} {
		_, err := Parse(tc.kind, tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%v, %q) = %v; want an error about %q", tc.kind, tc.in, err, tc.want)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || strings.HasSuffix(msg, ".") {
			t.Errorf("Parse(%q): %q is not one sentence", tc.in, msg)
		}
	}
}

func mustSet(t *testing.T, allow, deny []string) Set {
	t.Helper()
	var s Set
	for _, p := range allow {
		r, err := Parse(Allow, p)
		if err != nil {
			t.Fatal(err)
		}
		s.Allow = append(s.Allow, r)
	}
	for _, p := range deny {
		r, err := Parse(Deny, p)
		if err != nil {
			t.Fatal(err)
		}
		s.Deny = append(s.Deny, r)
	}
	return s
}

// A rule in the wrong list matches nothing.
func TestRulesInTheWrongListAreIgnored(t *testing.T) {
	allow, _ := Parse(Allow, "go test *")
	deny, _ := Parse(Deny, "rm *")
	s := Set{Allow: []Rule{deny}, Deny: []Rule{allow}}
	if m := s.Check("go test ./..."); m.Allowed || m.Denied {
		t.Errorf("go test: %+v", m)
	}
	if m := s.Check("rm x"); m.Allowed || m.Denied {
		t.Errorf("rm: %+v", m)
	}
}

func TestZeroRuleMatchesNothing(t *testing.T) {
	s := Set{Allow: []Rule{{}}, Deny: []Rule{{kind: Deny}}}
	if m := s.Check("go test"); m.Allowed || m.Denied {
		t.Errorf("%+v", m)
	}
}
