package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain lets TestCLocaleIsSilent re-run this test binary as a child that
// exits right after package initialisation, where the toolkit reads the
// locale.
func TestMain(m *testing.M) {
	if os.Getenv("TALLY_TEST_INIT_ONLY") == "1" {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCLocaleIsSilent starts the binary's package initialisation under the
// locales of containers and CI machines and requires a silent stderr: a
// headless command must not print the toolkit's locale errors.
func TestCLocaleIsSilent(t *testing.T) {
	for _, env := range [][]string{
		{"LANG=C.UTF-8"},
		{"LANG=C"},
		{"LC_ALL=POSIX"},
		{"LANG=en_US.UTF-8", "LC_ALL=C.UTF-8"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(cleanLocaleEnv(), "TALLY_TEST_INIT_ONLY=1")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: child failed: %v\n%s", env, err, out)
		}
		if len(out) != 0 {
			t.Errorf("%v: initialisation printed:\n%s", env, out)
		}
	}
}

func cleanLocaleEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func TestOpensWindow(t *testing.T) {
	cases := map[string]bool{"": true, "--data x": true, "sessions": false, "--help": false, "run hi": false}
	for in, want := range cases {
		if got := opensWindow(strings.Fields(in)); got != want {
			t.Errorf("opensWindow(%q) = %v, want %v", in, got, want)
		}
	}
}
