package secrets

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

//go:embed gitleaks.toml
var gitleaksRules string

//go:embed tally.toml
var tallyRules string

// config is the part of a gitleaks configuration file this package reads.
type config struct {
	Allowlist  *allowlistConfig  `toml:"allowlist"`
	Allowlists []allowlistConfig `toml:"allowlists"`
	Rules      []ruleConfig      `toml:"rules"`
}

type ruleConfig struct {
	ID          string            `toml:"id"`
	Regex       string            `toml:"regex"`
	Path        string            `toml:"path"`
	SecretGroup int               `toml:"secretGroup"`
	Entropy     float64           `toml:"entropy"`
	Keywords    []string          `toml:"keywords"`
	SkipReport  bool              `toml:"skipReport"`
	Required    []map[string]any  `toml:"required"`
	Allowlist   *allowlistConfig  `toml:"allowlist"`
	Allowlists  []allowlistConfig `toml:"allowlists"`
}

type allowlistConfig struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	Stopwords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
	TargetRules []string `toml:"targetRules"`
}

// rule is one compiled detection rule.
type rule struct {
	id          string
	re          *regexp.Regexp
	secretGroup int
	entropy     float64
	keywords    []string // lower case; none means the rule always runs
	reach       reach    // how far a match reaches from a keyword
	allow       []*allowlist
	// generic rules yield to a specific rule matching the same text when
	// the redaction is labelled.
	generic bool
}

// Allowlist targets: what an allowlist's regexes are matched against.
const (
	targetSecret = iota
	targetMatch
	targetLine
)

// allowlist is one compiled allowlist. A finding it matches is not a secret.
type allowlist struct {
	target    int
	and       bool
	never     bool           // an AND condition on paths or commits, which text never has
	re        *regexp.Regexp // the regexes joined with |; nil when none
	stopwords []string       // lower case
	rules     []string       // for global allowlists: the rule ids it is limited to
}

// ruleSet is the compiled rule set with its keyword index.
type ruleSet struct {
	rules   []*rule
	global  []*allowlist
	index   *keywordIndex
	always  []int // indexes of rules without keywords
	skipped []string
}

var (
	loadOnce sync.Once
	loaded   *ruleSet
)

// rules returns the compiled rule set, building it on first use.
func rules() *ruleSet {
	loadOnce.Do(func() {
		loaded = buildRuleSet(gitleaksRules, tallyRules)
	})
	return loaded
}

// buildRuleSet compiles the given configuration files in order. A file that
// does not parse, a rule that does not compile or that needs a file path is
// skipped and recorded; it never stops the others.
func buildRuleSet(files ...string) *ruleSet {
	rs := &ruleSet{}
	for i, src := range files {
		var cfg config
		if _, err := toml.Decode(src, &cfg); err != nil {
			rs.skipped = append(rs.skipped, fmt.Sprintf("rule file %d: %v", i+1, err))
			continue
		}
		if cfg.Allowlist != nil {
			cfg.Allowlists = append(cfg.Allowlists, *cfg.Allowlist)
		}
		for _, ac := range cfg.Allowlists {
			a, err := compileAllowlist(ac)
			if err != nil {
				rs.skipped = append(rs.skipped, fmt.Sprintf("global allowlist: %v", err))
				continue
			}
			rs.global = append(rs.global, a)
		}
		for _, rc := range cfg.Rules {
			r, err := compileRule(rc)
			if err != nil {
				rs.skipped = append(rs.skipped, fmt.Sprintf("%s: %v", rc.ID, err))
				continue
			}
			rs.rules = append(rs.rules, r)
		}
	}
	var words []string
	var owners [][]int
	seen := map[string]int{}
	for ri, r := range rs.rules {
		if len(r.keywords) == 0 {
			rs.always = append(rs.always, ri)
			continue
		}
		for _, k := range r.keywords {
			wi, ok := seen[k]
			if !ok {
				wi = len(words)
				seen[k] = wi
				words = append(words, k)
				owners = append(owners, nil)
			}
			if !slices.Contains(owners[wi], ri) {
				owners[wi] = append(owners[wi], ri)
			}
		}
	}
	rs.index = newKeywordIndex(words, owners)
	return rs
}

func compileRule(rc ruleConfig) (*rule, error) {
	switch {
	case strings.TrimSpace(rc.ID) == "":
		return nil, fmt.Errorf("rule has no id")
	case rc.Regex == "":
		return nil, fmt.Errorf("path-only rule, which plain text cannot match")
	case rc.Path != "":
		return nil, fmt.Errorf("rule is limited to file paths, which plain text does not have")
	case len(rc.Required) > 0:
		return nil, fmt.Errorf("composite rule (required), which is not supported")
	case rc.SkipReport:
		return nil, fmt.Errorf("rule only feeds composite rules (skipReport)")
	}
	re, err := regexp.Compile(rc.Regex)
	if err != nil {
		return nil, fmt.Errorf("regex does not compile with Go's regexp: %w", err)
	}
	if rc.SecretGroup < 0 || rc.SecretGroup > re.NumSubexp() {
		return nil, fmt.Errorf("secretGroup %d does not exist in the regex", rc.SecretGroup)
	}
	r := &rule{
		id:          rc.ID,
		re:          re,
		secretGroup: rc.SecretGroup,
		entropy:     rc.Entropy,
		reach:       analyze(rc.Regex),
		generic:     strings.HasPrefix(rc.ID, "generic"),
	}
	for _, k := range rc.Keywords {
		if k = lowerASCII(k); k != "" && !slices.Contains(r.keywords, k) {
			r.keywords = append(r.keywords, k)
		}
	}
	if rc.Allowlist != nil {
		rc.Allowlists = append(rc.Allowlists, *rc.Allowlist)
	}
	for _, ac := range rc.Allowlists {
		a, err := compileAllowlist(ac)
		if err != nil {
			return nil, err
		}
		r.allow = append(r.allow, a)
	}
	return r, nil
}

func compileAllowlist(ac allowlistConfig) (*allowlist, error) {
	a := &allowlist{rules: ac.TargetRules}
	switch strings.ToLower(ac.RegexTarget) {
	case "", "secret":
		a.target = targetSecret
	case "match":
		a.target = targetMatch
	case "line":
		a.target = targetLine
	default:
		return nil, fmt.Errorf("allowlist regexTarget %q is unknown", ac.RegexTarget)
	}
	switch strings.ToUpper(ac.Condition) {
	case "", "OR":
	case "AND":
		a.and = true
		a.never = len(ac.Paths) > 0 || len(ac.Commits) > 0
	default:
		return nil, fmt.Errorf("allowlist condition %q is unknown", ac.Condition)
	}
	if len(ac.Regexes) > 0 {
		re, err := regexp.Compile("(?:" + strings.Join(ac.Regexes, ")|(?:") + ")")
		if err != nil {
			return nil, fmt.Errorf("allowlist regex does not compile with Go's regexp: %w", err)
		}
		a.re = re
	}
	for _, w := range ac.Stopwords {
		if w = strings.ToLower(w); w != "" {
			a.stopwords = append(a.stopwords, w)
		}
	}
	return a, nil
}

// allows reports whether the allowlist exempts a finding of rule id with the
// given secret, whole match and line.
func (a *allowlist) allows(id, secret, match, line string) bool {
	if len(a.rules) > 0 && !slices.Contains(a.rules, id) {
		return false
	}
	target := secret
	switch a.target {
	case targetMatch:
		target = match
	case targetLine:
		target = line
	}
	regexOK := a.re != nil && target != "" && a.re.MatchString(target)
	stopOK := false
	if len(a.stopwords) > 0 {
		low := strings.ToLower(secret)
		for _, w := range a.stopwords {
			if strings.Contains(low, w) {
				stopOK = true
				break
			}
		}
	}
	if !a.and {
		return regexOK || stopOK
	}
	if a.never || (a.re == nil && len(a.stopwords) == 0) {
		return false
	}
	return (a.re == nil || regexOK) && (len(a.stopwords) == 0 || stopOK)
}

// lowerASCII lowers the ASCII letters of s and leaves every other byte, so
// byte offsets in the result are offsets in s.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// Stats reports how many rules are in use and, for each rule or rule file
// left out, why. It loads the rules if that has not happened yet.
func Stats() (active int, skipped []string) {
	rs := rules()
	return len(rs.rules), slices.Clone(rs.skipped)
}
