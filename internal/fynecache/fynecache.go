// Package fynecache shortens how long the GUI toolkit keeps what it
// caches for an object or a text (renderers, measurements, and the
// texture of every run of text drawn) after its last use: Fyne's minute
// became 15 s. Paging through a 10,000-message chat otherwise held the
// textures of every line drawn in the last minute: 368–383 MB resident
// under Mesa's software renderer just after, against 304–308 MB with 15 s
// (scripts/appmemory/run.sh).
//
// Fyne reads the duration from the environment (FYNE_CACHE) during its
// package initialisation, so importing this package is what sets it: its
// init runs before the toolkit's, as internal/locale's does (it depends
// on the standard library only, and the binary's main package imports
// it). A FYNE_CACHE the user set is left as it is.
package fynecache

import (
	"os"
	"time"
)

// Life is the cache duration the app asks Fyne for.
const Life = 15 * time.Second

// fyneDefault is Fyne's own duration, when FYNE_CACHE is unset or not a
// duration.
const fyneDefault = time.Minute

// variable is the environment variable Fyne reads.
const variable = "FYNE_CACHE"

var (
	life time.Duration // what Fyne read
	ours bool          // variable was set by this package
)

func init() {
	if _, set := os.LookupEnv(variable); !set {
		ours = os.Setenv(variable, Life.String()) == nil
	}
	life = fyneDefault
	if d, err := time.ParseDuration(os.Getenv(variable)); err == nil {
		life = d
	}
}

// Duration is how long Fyne keeps an unused cache entry in this process.
func Duration() time.Duration { return life }

// Forget removes FYNE_CACHE from the environment again when this package
// set it, once Fyne has read it, so that the commands the agent runs do
// not inherit it.
func Forget() {
	if ours {
		os.Unsetenv(variable)
		ours = false
	}
}
