// Package realmodel drives Tally against a real model served by
// llama.cpp's llama-server on this machine: it starts and stops the
// server, records what passes between Tally and it through a logging
// proxy (with the server's own per-request timings), runs the tally
// binary as a user would, and holds the small evaluation's tasks and
// their checkers. The checks themselves are in scripts/realmodel, built
// only with the realmodel tag (make realmodel); this package's own tests
// need neither the server nor a model.
package realmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/tally-dev/tally/internal/proc"
)

// ServerOptions say how to start llama-server.
type ServerOptions struct {
	// Binary is the llama-server executable; Model the GGUF file.
	Binary, Model string
	// Template, when set, is a Jinja chat template used instead of the
	// model's own (--chat-template-file).
	Template string
	// TemplateKwargs, when set, is a JSON object of variables the
	// template sees (--chat-template-kwargs).
	TemplateKwargs string
	// Alias is the model name the server answers to (default "smollm2").
	Alias string
	// Context is the context size in tokens (-c; default 8192).
	Context int
	// Seed is the sampler's seed (default 42); the temperature is always 0.
	Seed int
	// Predict caps the tokens of one reply (-n; default 256), so a model
	// that repeats itself cannot run to the end of the window.
	Predict int
	// Threads is the number of CPU threads (default 1: on a machine whose
	// two cores are shared, two threads wait for each other at every
	// step and run several times slower than one).
	Threads int
	// CacheReuse is the smallest chunk llama-server reuses from its prompt
	// cache by shifting the KV cache (--cache-reuse; default 256).
	CacheReuse int
	// Log receives the server's output; nil discards it.
	Log io.Writer
	// Ready bounds the wait for /health (default 2 minutes).
	Ready time.Duration
}

// Server is a running llama-server.
type Server struct {
	// URL is the server's root, http://127.0.0.1:PORT (the OpenAI API
	// is under /v1).
	URL string
	// Args are the command-line arguments it was started with.
	Args []string
	cmd  *exec.Cmd
	done chan error
}

func (o ServerOptions) withDefaults() ServerOptions {
	if o.Alias == "" {
		o.Alias = "smollm2"
	}
	if o.Context <= 0 {
		o.Context = 8192
	}
	if o.Seed == 0 {
		o.Seed = 42
	}
	if o.Predict <= 0 {
		o.Predict = 256
	}
	if o.Threads <= 0 {
		o.Threads = 1
	}
	if o.CacheReuse <= 0 {
		o.CacheReuse = 256
	}
	if o.Ready <= 0 {
		o.Ready = 2 * time.Minute
	}
	return o
}

// Args returns the arguments llama-server is started with on port: on
// 127.0.0.1 only, with --jinja, one slot (so every request of a session
// meets the cache the previous one left), a fixed seed, temperature 0,
// the prompt cache on and reuse by KV shifting.
func (o ServerOptions) Args(port int) []string {
	o = o.withDefaults()
	args := []string{
		"--model", o.Model,
		"--alias", o.Alias,
		"--host", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--jinja",
		"--ctx-size", strconv.Itoa(o.Context),
		"--parallel", "1",
		"--seed", strconv.Itoa(o.Seed),
		"--temp", "0",
		"--n-predict", strconv.Itoa(o.Predict),
		"--threads", strconv.Itoa(o.Threads),
		"--cache-prompt",
		"--cache-reuse", strconv.Itoa(o.CacheReuse),
		"--no-webui",
	}
	if o.Template != "" {
		args = append(args, "--chat-template-file", o.Template)
	}
	if o.TemplateKwargs != "" {
		args = append(args, "--chat-template-kwargs", o.TemplateKwargs)
	}
	return args
}

// StartServer starts llama-server on a free port of 127.0.0.1 and waits
// until /health answers 200. The server dies with the test process's
// process (its parent-death signal) and is stopped by Stop.
func StartServer(ctx context.Context, o ServerOptions) (*Server, error) {
	o = o.withDefaults()
	for _, f := range []string{o.Binary, o.Model} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("cannot start llama-server: %w; run scripts/realmodel/setup.sh first", err)
		}
	}
	var lastErr error
	for range 3 { // a port taken between choosing it and binding it: choose again
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), Args: o.Args(port), done: make(chan error, 1)}
		s.cmd = exec.Command(o.Binary, s.Args...)
		s.cmd.Stdout, s.cmd.Stderr = o.Log, o.Log
		proc.StartInGroup(s.cmd)
		if err := s.cmd.Start(); err != nil {
			return nil, fmt.Errorf("cannot start llama-server: %w", err)
		}
		go func() { s.done <- s.cmd.Wait() }()
		if lastErr = s.waitHealthy(ctx, o.Ready); lastErr == nil {
			return s, nil
		}
		s.Stop()
	}
	return nil, lastErr
}

// waitHealthy polls /health until it answers 200, the process exits or
// the wait runs out.
func (s *Server) waitHealthy(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("llama-server exited before it was ready (%v); its log says why", err)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := client.Get(s.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("llama-server did not answer /health within %s", limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Alive reports whether the server process is still running.
func (s *Server) Alive() bool {
	select {
	case err := <-s.done:
		s.done <- err
		return false
	default:
		return true
	}
}

// Stop ends the server: SIGTERM, and SIGKILL if it is still there after
// ten seconds. It waits for the process to exit.
func (s *Server) Stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	if !s.Alive() {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		err := <-s.done
		s.done <- err
	}
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("no free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("the listener's address is not TCP")
	}
	return addr.Port, nil
}
