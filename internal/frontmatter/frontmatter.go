// Package frontmatter reads the YAML header of a Markdown file, the shape
// SKILL.md, custom commands and custom agents share:
//
//	---
//	name: review
//	description: Review the staged change.
//	---
//	The body.
//
// A file without the opening "---" line has no header: all of it is the
// body. A header that does not close, or is not valid YAML, is an error
// that names the line; nothing here panics on any input.
package frontmatter

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tally-dev/tally/internal/safefile"
)

// MaxHeader bounds the header, in bytes.
const MaxHeader = 16 << 10

// Parse splits data into its header, decoded into v (a pointer to a
// struct with yaml tags, or to a map), and its body.
func Parse(data []byte, v any) (body string, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	head, body, ok, err := split(data)
	if err != nil || !ok {
		return body, err
	}
	if err := yaml.Unmarshal(head, v); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return body, fmt.Errorf("its header has a field of the wrong kind (%s); correct the header", strings.Join(te.Errors, "; "))
		}
		return body, fmt.Errorf("its header is not valid YAML (%w); correct the header between the --- lines", err)
	}
	return body, nil
}

// split cuts the header off data; ok is false when there is none.
func split(data []byte) (head []byte, body string, ok bool, err error) {
	first, rest, found := bytes.Cut(data, []byte("\n"))
	if strings.TrimSpace(strings.TrimSuffix(string(first), "\r")) != "---" {
		return nil, string(data), false, nil
	}
	if !found {
		return nil, "", false, errors.New("its header opens with --- but never closes; end it with a --- line")
	}
	for off := 0; off < len(rest); {
		line, _, _ := bytes.Cut(rest[off:], []byte("\n"))
		if t := strings.TrimSpace(strings.TrimSuffix(string(line), "\r")); t == "---" || t == "..." {
			if off > MaxHeader {
				return nil, "", false, fmt.Errorf("its header is over %d KB; shorten it", MaxHeader>>10)
			}
			end := off + len(line) + 1
			if end > len(rest) {
				end = len(rest)
			}
			return rest[:off], strings.TrimLeft(string(rest[end:]), "\r\n"), true, nil
		}
		off += len(line) + 1
	}
	return nil, "", false, errors.New("its header opens with --- but never closes; end it with a --- line")
}

// List is a header field that may be written as a YAML list or as one
// string separated by commas or spaces ("Read, Grep" or "Read Grep"), as
// the tools of skills and agents are.
type List []string

// UnmarshalYAML implements yaml.Unmarshaler.
func (l *List) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = nil
		for _, f := range strings.FieldsFunc(n.Value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			*l = append(*l, f)
		}
		return nil
	case yaml.SequenceNode:
		var items []string
		if err := n.Decode(&items); err != nil {
			return err
		}
		*l = nil
		for _, it := range items {
			if it = strings.TrimSpace(it); it != "" {
				*l = append(*l, it)
			}
		}
		return nil
	}
	return fmt.Errorf("line %d: expected a list or a comma-separated string", n.Line)
}

// ReadFile reads the file at path (a regular file of at most limit
// bytes, kept inside the folder within unless that is "", see
// safefile.ReadWithin) and parses it as Parse does. what names the file
// in errors ("the skill", "the sub-agent"); a missing file returns an
// error matching fs.ErrNotExist.
func ReadFile(path, within string, limit int64, what string, v any) (body string, err error) {
	data, _, err := safefile.ReadWithin(within, path, limit)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("%s %s cannot be read (%w); fix or remove it", what, path, err)
	}
	body, err = Parse(data, v)
	if err != nil {
		return "", fmt.Errorf("%s %s is skipped: %w", what, path, err)
	}
	return body, nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// IsName tells whether s is a name as skills and agents take them:
// lowercase letters, digits and hyphens, at most 64, not starting with a
// hyphen.
func IsName(s string) bool { return nameRE.MatchString(s) }
