package fynecache

import (
	"os"
	"testing"
	"time"
)

// The package's init asked for Life unless the test's environment set
// FYNE_CACHE already, and Forget removes only what the package set.
func TestTheCacheDurationIsSetOnceAndForgotten(t *testing.T) {
	// Forget changes the process's state; put it back so that the test
	// means the same on every run in one process (-count=3).
	wasOurs := ours
	value, wasSet := os.LookupEnv(variable)
	t.Cleanup(func() {
		ours = wasOurs
		if wasSet {
			os.Setenv(variable, value)
		} else {
			os.Unsetenv(variable)
		}
	})
	if ours {
		if got := os.Getenv(variable); got != Life.String() || Duration() != Life {
			t.Fatalf("FYNE_CACHE %q, Duration %v; want %v", got, Duration(), Life)
		}
		Forget()
		if _, set := os.LookupEnv(variable); set {
			t.Error("Forget left FYNE_CACHE set")
		}
		return
	}
	want := fyneDefault
	if d, err := time.ParseDuration(os.Getenv(variable)); err == nil {
		want = d
	}
	if Duration() != want {
		t.Errorf("with FYNE_CACHE=%q set by the user, Duration is %v; want %v", os.Getenv(variable), Duration(), want)
	}
	before := os.Getenv(variable)
	Forget()
	if os.Getenv(variable) != before {
		t.Error("Forget removed the user's FYNE_CACHE")
	}
}
