package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// sandboxModes are the ways a command can run, from the strongest: in the
// helper's namespaces, in the subreaper helper with Landlock only (as
// before the namespaces), and without the helper.
var sandboxModes = []struct {
	name  string
	setup func() (undo func())
}{
	{"isolated", func() func() { return func() {} }},
	{"landlock-only", func() func() {
		isolationBroken.Store(true)
		return func() { isolationBroken.Store(false) }
	}},
	{"unsandboxed", func() func() {
		helperInstalled.Store(false)
		return func() { helperInstalled.Store(true) }
	}},
}

// runOnce runs command in ws and fails b unless it exits 0.
func runOnce(b *testing.B, ws, command string, env []string, p Policy) {
	out, err := os.CreateTemp(b.TempDir(), "out")
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	p.Workspace = ws
	c, err := Start(Spec{Shell: "/bin/sh", Command: command, Dir: ws, Env: env, Output: out, Policy: p})
	if err != nil {
		b.Fatal(err)
	}
	<-c.Done()
	if code, _ := c.ExitStatus(); code != 0 {
		text, _ := os.ReadFile(out.Name())
		b.Fatalf("%q exited %d: %s", command, code, text)
	}
}

// BenchmarkStart measures what the sandbox adds to one short command.
//
//	go test -run '^$' -bench BenchmarkStart -benchtime 200x ./internal/sandbox
func BenchmarkStart(b *testing.B) {
	for _, m := range sandboxModes {
		b.Run(m.name, func(b *testing.B) {
			defer m.setup()()
			ws := b.TempDir()
			env := Environ(os.Environ(), nil)
			for b.Loop() {
				runOnce(b, ws, "true", env, Policy{})
			}
		})
	}
}

// BenchmarkColdGoBuild measures a Go build with an empty build cache
// inside the sandbox and without it: what a new workspace's first build
// costs now that the sandbox gives each workspace a cache of its own.
//
//	go test -run '^$' -bench BenchmarkColdGoBuild -benchtime 1x ./internal/sandbox
func BenchmarkColdGoBuild(b *testing.B) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("go is not installed")
	}
	for _, m := range sandboxModes {
		b.Run(m.name, func(b *testing.B) {
			defer m.setup()()
			ws := b.TempDir()
			os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/hello\n\ngo 1.26\n"), 0o644)
			os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644)
			for b.Loop() {
				cache := b.TempDir()
				env := append(Environ(os.Environ(), nil), "GOCACHE="+cache, "TMPDIR="+cache, "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "HOME="+os.Getenv("HOME"))
				runOnce(b, ws, goBin+" build -o hello .", env, Policy{Writable: []string{cache}})
			}
		})
	}
}
