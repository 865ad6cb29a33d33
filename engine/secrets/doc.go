// Package secrets finds credentials in text and replaces them with a marker,
// so that tool output can be cleaned at intake, before any log, store, wire
// or screen sees it.
//
// [Redact] replaces the secret part of every match with "[redacted: <rule
// id>]" and keeps the surrounding text. It never panics, is safe for
// concurrent use, and returns its input unchanged (without copying) when no
// rule's keyword occurs in it.
//
// # Where the rules come from
//
// Most rules are gitleaks' default rule set, vendored as data:
// gitleaks.toml is config/gitleaks.toml of the Go module
// github.com/zricethezav/gitleaks/v8 at v8.30.1, used under the MIT license
// in LICENSE.gitleaks. Only the file is used, not the module. To refresh it,
// run
//
//	go mod download -json github.com/zricethezav/gitleaks/v8@vX.Y.Z
//
// (without adding the module to go.mod), copy config/gitleaks.toml and
// LICENSE from the printed "Dir" over the files here, update the version
// above and run this package's tests. tally.toml holds the few rules Tally
// adds, in the same format.
//
// Both files are parsed once, on first use. Each rule's regex is compiled
// with Go's regexp package; a rule's keywords are a case-insensitive
// prefilter, its secretGroup (or else its first non-empty group) is the part
// replaced, and its entropy is the minimum Shannon entropy of that part.
// The global and per-rule allowlists apply through their regexes (on the
// secret, the whole match or the line, as regexTarget says) and stopwords.
// What needs a file path or a commit cannot apply to plain text: rules with
// a path filter are skipped and counted (see [Stats]), and allowlist entries
// on paths or commits never match.
package secrets
