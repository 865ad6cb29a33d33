// Package locale makes a C or POSIX locale (LANG=C.UTF-8, the default of
// many containers and CI machines) acceptable to the GUI toolkit's locale
// lookup, which cannot parse "C" as a language tag and otherwise logs an
// error from its package initialisation — even for headless commands that
// never open a window.
//
// Importing the package is enough: its init runs before the toolkit's (it
// has no dependencies beyond the standard library, and the binary's main
// package imports it first). When the effective locale is C or POSIX and
// LANGUAGE is unset, it sets LANGUAGE=en. The C library ignores LANGUAGE
// under the C locale, so commands the agent runs see no difference.
package locale

import (
	"os"
	"strings"
)

func init() { Normalize(os.Getenv, os.Setenv) }

// Normalize sets LANGUAGE=en through set when the effective locale read
// through get (LC_ALL, then LC_MESSAGES, then LANG) is C or POSIX, with or
// without a codeset suffix, and LANGUAGE is unset. It reports whether it set
// anything.
func Normalize(get func(string) string, set func(string, string) error) bool {
	if get("LANGUAGE") != "" {
		return false
	}
	var loc string
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if loc = get(name); loc != "" {
			break
		}
	}
	base, _, _ := strings.Cut(loc, ".")
	base, _, _ = strings.Cut(base, "@")
	if base != "C" && base != "POSIX" {
		return false
	}
	return set("LANGUAGE", "en") == nil
}
