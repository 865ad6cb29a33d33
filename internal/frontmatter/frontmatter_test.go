package frontmatter

import (
	"reflect"
	"strings"
	"testing"
)

type head struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Tools       List   `yaml:"tools"`
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    head
		body    string
		wantErr string
	}{
		{in: "---\nname: a\ndescription: >\n  two\n  lines\ntools: Read, Grep\n---\nbody\n", want: head{Name: "a", Description: "two lines\n", Tools: List{"Read", "Grep"}}, body: "body\n"},
		{in: "\xef\xbb\xbf---\r\nname: b\r\ntools: [x, y]\r\n---\r\n\r\nbody", want: head{Name: "b", Tools: List{"x", "y"}}, body: "body"},
		{in: "no header\n---\nname: x\n---\n", body: "no header\n---\nname: x\n---\n"},
		{in: "---\nname: x\n", wantErr: "never closes"},
		{in: "---\nname: [unclosed\n---\n", wantErr: "not valid YAML"},
		{in: "---\nname: {a: 1}\n---\n", wantErr: "wrong kind"},
		{in: "---\n---\nonly body", body: "only body"},
	} {
		var h head
		body, err := Parse([]byte(c.in), &h)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Parse(%q) err = %v, want %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(h, c.want) || body != c.body {
			t.Errorf("Parse(%q) = %+v, %q, %v", c.in, h, body, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("---\nname: a\n---\nb")
	f.Add("---\n- [\n")
	f.Fuzz(func(t *testing.T, s string) {
		var h head
		_, _ = Parse([]byte(s), &h)
	})
}
