package mcp

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tally-dev/tally/internal/text"
)

// maxExact is the largest whole number a float64 holds exactly.
const maxExact = 1 << 53

// Normalize checks v as an answer to the field and returns it as the
// field's type (see [Field]); it takes the JSON forms too (a float64 for
// an integer, a []any of strings for choices). The error says, in one
// sentence, what the answer must be.
func (f Field) Normalize(v any) (any, error) {
	switch f.Kind {
	case KindString:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%q must be text", f.Label())
		}
		return s, f.checkText(s)
	case KindChoice:
		s, ok := v.(string)
		if !ok || !f.allows(s) {
			return nil, f.choiceError()
		}
		return s, nil
	case KindBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%q must be yes or no", f.Label())
		}
		return b, nil
	case KindNumber:
		x, ok := number(v)
		if !ok {
			return nil, fmt.Errorf("%q must be a number, such as 2.5", f.Label())
		}
		return x, f.checkRange(x)
	case KindInteger:
		x, ok := number(v)
		if !ok || x != math.Trunc(x) || math.Abs(x) > maxExact {
			return nil, fmt.Errorf("%q must be a whole number, such as 3", f.Label())
		}
		return int64(x), f.checkRange(x)
	case KindChoices:
		return f.normalizeChoices(v)
	}
	return nil, fmt.Errorf("%q has a kind of field Tally does not know (%q)", f.Label(), f.Kind)
}

// number reads a JSON or Go number.
func number(v any) (float64, bool) {
	var x float64
	switch n := v.(type) {
	case float64:
		x = n
	case float32:
		x = float64(n)
	case int:
		x = float64(n)
	case int64:
		x = float64(n)
	case int32:
		x = float64(n)
	case json.Number:
		var err error
		if x, err = n.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return x, !math.IsNaN(x) && !math.IsInf(x, 0)
}

func (f Field) checkRange(x float64) error {
	switch {
	case f.Min != nil && x < *f.Min && f.Max != nil:
		return fmt.Errorf("%q must be between %s and %s", f.Label(), num(*f.Min), num(*f.Max))
	case f.Min != nil && x < *f.Min:
		return fmt.Errorf("%q must be at least %s", f.Label(), num(*f.Min))
	case f.Max != nil && x > *f.Max && f.Min != nil:
		return fmt.Errorf("%q must be between %s and %s", f.Label(), num(*f.Min), num(*f.Max))
	case f.Max != nil && x > *f.Max:
		return fmt.Errorf("%q must be at most %s", f.Label(), num(*f.Max))
	}
	return nil
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func (f Field) checkText(s string) error {
	n := utf8.RuneCountInString(s)
	switch {
	case f.MinLength != nil && n < *f.MinLength:
		return fmt.Errorf("%q must have at least %s", f.Label(), text.Plural(*f.MinLength, "character"))
	case f.MaxLength != nil && n > *f.MaxLength:
		return fmt.Errorf("%q must have at most %s", f.Label(), text.Plural(*f.MaxLength, "character"))
	}
	if s == "" {
		return nil
	}
	switch f.Format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return fmt.Errorf("%q must be an email address, such as ada@example.com", f.Label())
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return fmt.Errorf("%q must be a full address, such as https://example.com/page", f.Label())
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Errorf("%q must be a date, such as 2025-03-31", f.Label())
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Errorf("%q must be a date and time, such as 2025-03-31T14:30:00Z", f.Label())
		}
	}
	return nil
}

func (f Field) allows(s string) bool {
	return slices.ContainsFunc(f.Choices, func(c Choice) bool { return c.Value == s })
}

func (f Field) choiceError() error {
	var labels []string
	for i, c := range f.Choices {
		if i == 8 {
			labels = append(labels, fmt.Sprintf("and %d more", len(f.Choices)-i))
			break
		}
		labels = append(labels, text.Clip(c.Label(), 40))
	}
	if f.Kind == KindChoices {
		return fmt.Errorf("%q takes only these choices: %s", f.Label(), strings.Join(labels, ", "))
	}
	return fmt.Errorf("%q must be one of: %s", f.Label(), strings.Join(labels, ", "))
}

func (f Field) normalizeChoices(v any) (any, error) {
	var picked []string
	switch l := v.(type) {
	case []string:
		picked = slices.Clone(l)
	case []any:
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, f.choiceError()
			}
			picked = append(picked, s)
		}
	default:
		return nil, fmt.Errorf("%q must be a list of choices", f.Label())
	}
	if picked == nil {
		picked = []string{}
	}
	for i, s := range picked {
		if !f.allows(s) {
			return nil, f.choiceError()
		}
		if slices.Contains(picked[:i], s) {
			return nil, fmt.Errorf("%q has %q twice; pick each choice once", f.Label(), text.Clip(s, 40))
		}
	}
	switch n := len(picked); {
	case f.MinItems != nil && n < *f.MinItems:
		return nil, fmt.Errorf("%q needs at least %s", f.Label(), text.Plural(*f.MinItems, "choice"))
	case f.MaxItems != nil && n > *f.MaxItems:
		return nil, fmt.Errorf("%q takes at most %s", f.Label(), text.Plural(*f.MaxItems, "choice"))
	}
	return picked, nil
}

// Parse reads a typed answer to the field: text as it is; a number; yes
// or no (also y, n, true, false); a choice by its value, its title or its
// number in the list (from 1); several choices separated by commas. An
// empty answer (spaces only, except for text) is nil: the field is left
// out. The value is checked as Normalize checks it.
func (f Field) Parse(s string) (any, error) {
	t := strings.TrimSpace(s)
	if f.Kind != KindString {
		s = t
	}
	if s == "" {
		return nil, nil
	}
	switch f.Kind {
	case KindNumber:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q must be a number, such as 2.5", f.Label())
		}
		return f.Normalize(x)
	case KindInteger:
		if i, err := strconv.ParseInt(s, 10, 64); err == nil && math.Abs(float64(i)) <= maxExact {
			return f.Normalize(i)
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q must be a whole number, such as 3", f.Label())
		}
		return f.Normalize(x)
	case KindBoolean:
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q must be yes or no", f.Label())
	case KindChoice:
		c, ok := f.pick(s)
		if !ok {
			return nil, f.choiceError()
		}
		return c, nil
	case KindChoices:
		var picked []string
		for part := range strings.SplitSeq(s, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			c, ok := f.pick(part)
			if !ok {
				return nil, f.choiceError()
			}
			picked = append(picked, c)
		}
		return f.Normalize(picked)
	}
	return f.Normalize(s)
}

// pick finds the choice s names: its value, its number, or its title or
// value in any case.
func (f Field) pick(s string) (string, bool) {
	if f.allows(s) {
		return s, true
	}
	if i, err := strconv.Atoi(s); err == nil && i >= 1 && i <= len(f.Choices) {
		return f.Choices[i-1].Value, true
	}
	for _, c := range f.Choices {
		if strings.EqualFold(c.Value, s) || (c.Title != "" && strings.EqualFold(c.Title, s)) {
			return c.Value, true
		}
	}
	return "", false
}

// Text writes a value of the field as Parse reads it back ("" for nil):
// the pre-filled text of an entry or a terminal question.
func (f Field) Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case []string:
		return strings.Join(x, ", ")
	}
	if n, ok := number(v); ok {
		return num(n)
	}
	return fmt.Sprint(v)
}

// cloneValue copies a field value that may share memory (a list).
func cloneValue(v any) any {
	if l, ok := v.([]string); ok {
		return slices.Clone(l)
	}
	return v
}
