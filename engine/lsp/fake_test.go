package lsp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// waitState polls the status of server name until it is want, failing
// the test after limit.
func waitState(t *testing.T, m *Manager, name string, want State, limit time.Duration) ServerStatus {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		for _, st := range m.Status() {
			if st.Name == name && st.State == want {
				return st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %s did not become %s within %s: %+v", name, want, limit, m.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFakeServerDiagnosticsAndNewIn(t *testing.T) {
	for _, mode := range []string{"ok", "noversion", "weird"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"a.fake": "fine\nBAD here\n"})
			m := acquire(t, dir, Options{Servers: []ServerConfig{fakeConfig(t, "fake", mode, ".fake")}, Settle: 5 * time.Second})
			ctx := context.Background()
			before, rep := m.Diagnostics(ctx, "a.fake")
			if len(rep.Late) > 0 || len(rep.Notes) > 0 {
				t.Fatalf("report %+v", rep)
			}
			want := []Diagnostic{{Path: "a.fake", Line: 2, Column: 1, Severity: "error", Message: "BAD is not allowed", Source: "fake", Code: "7"}}
			if !slices.Equal(before["a.fake"], want) {
				t.Fatalf("diagnostics %+v, want %+v", before, want)
			}
			if mode == "ok" && rep.Waited > 2*time.Second {
				t.Errorf("a version-matched publish took %s to settle", rep.Waited)
			}
			if cur := m.Current("a.fake"); !slices.Equal(cur["a.fake"], want) {
				t.Errorf("Current = %+v", cur)
			}
			// The old problem moves down a line; a new one appears.
			writeFiles(t, dir, map[string]string{"a.fake": "new first line\nfine\nBAD here\n  BAD again\n"})
			after, _ := m.Diagnostics(ctx, filepath.Join(dir, "a.fake"))
			if len(after["a.fake"]) != 2 {
				t.Fatalf("after the edit %+v", after)
			}
			added := NewIn(before, after)
			if len(added["a.fake"]) != 1 || added["a.fake"][0].Line != 4 || added["a.fake"][0].Column != 3 {
				t.Fatalf("NewIn = %+v, want only the one on line 4", added)
			}
			writeFiles(t, dir, map[string]string{"a.fake": "all fine\n"})
			if fixed, _ := m.Diagnostics(ctx, "a.fake"); len(fixed) != 0 {
				t.Fatalf("after the fix %+v", fixed)
			}
			// Unchanged content settles at once.
			if _, rep := m.Diagnostics(ctx, "a.fake"); rep.Waited > time.Second || len(rep.Late) > 0 {
				t.Errorf("an unchanged file waited %s (%+v)", rep.Waited, rep)
			}
			st := waitState(t, m, "fake", StateRunning, time.Second)
			if st.Reason != "" || st.Restarts != 0 {
				t.Errorf("status %+v", st)
			}
		})
	}
}

func TestSyncDeletedFileAndOutsidePaths(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.fake": "BAD\n"})
	m := acquire(t, dir, Options{Servers: []ServerConfig{fakeConfig(t, "fake", "ok", ".fake")}})
	ctx := context.Background()
	if set, _ := m.Diagnostics(ctx, "a.fake"); len(set["a.fake"]) != 1 {
		t.Fatalf("diagnostics %+v", set)
	}
	if err := os.Remove(filepath.Join(dir, "a.fake")); err != nil {
		t.Fatal(err)
	}
	if set, rep := m.Diagnostics(ctx, "a.fake"); len(set) != 0 || len(rep.Notes) != 0 {
		t.Fatalf("a deleted file still has %+v (%+v)", set, rep)
	}
	for _, p := range []string{"../x.fake", "/etc/passwd", filepath.Join(filepath.Dir(dir), "x.fake")} {
		err := m.Sync(ctx, p)
		if err == nil || !strings.Contains(err.Error(), "outside the workspace") {
			t.Errorf("Sync(%q) = %v, want a refusal", p, err)
		}
		if _, err := m.Definition(ctx, p, 1, 1); err == nil || !strings.Contains(err.Error(), "outside the workspace") {
			t.Errorf("Definition(%q) = %v, want a refusal", p, err)
		}
	}
	_, rep := m.Diagnostics(ctx, "../x.fake")
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "outside the workspace") {
		t.Errorf("report %+v", rep)
	}
}

func TestNotInstalledServer(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.nope": "x\n"})
	sc := ServerConfig{Name: "nope", Command: "tally-no-such-language-server", Extensions: []string{".nope"}}
	m := acquire(t, dir, Options{Servers: []ServerConfig{sc}})
	st := m.Status()
	if len(st) != 1 || st[0].State != StateNotInstalled || !strings.Contains(st[0].Reason, "is not on PATH") {
		t.Fatalf("status %+v", st)
	}
	if av := m.Available(); len(av) != 0 {
		t.Errorf("Available = %+v", av)
	}
	began := time.Now()
	set, rep := m.Diagnostics(context.Background(), "a.nope")
	if len(set) != 0 || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "not on PATH") || time.Since(began) > time.Second {
		t.Errorf("Diagnostics = %+v, %+v", set, rep)
	}
	if _, err := m.Hover(context.Background(), "a.nope", 1, 1); err == nil || !strings.Contains(err.Error(), "not on PATH") {
		t.Errorf("Hover error %v", err)
	}
}

func TestHungServerIsBounded(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.hang": "x\n"})
	sc := ServerConfig{Name: "hang", Command: "sleep", Args: []string{"100"}, Extensions: []string{".hang"}}
	m := acquire(t, dir, Options{Servers: []ServerConfig{sc}, StartTimeout: 1500 * time.Millisecond, Settle: time.Second, RequestTimeout: time.Second})
	began := time.Now()
	_, rep := m.Diagnostics(context.Background(), "a.hang")
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("Diagnostics took %s with a hung server", took)
	}
	if !slices.Contains(rep.Late, "hang") || len(rep.Notes) == 0 {
		t.Errorf("report %+v does not name the hung server", rep)
	}
	st := waitState(t, m, "hang", StateFailed, 3*time.Second)
	if !strings.Contains(st.Reason, "initialize") || !strings.Contains(st.Reason, st.LogPath) {
		t.Errorf("reason %q", st.Reason)
	}
	// A failed server answers at once from now on.
	began = time.Now()
	if _, err := m.Definition(context.Background(), "a.hang", 1, 1); err == nil || time.Since(began) > 500*time.Millisecond {
		t.Errorf("Definition on a failed server: %v after %s", err, time.Since(began))
	}
}

func TestDeafServerIsFailed(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 300<<10) + "\n"
	writeFiles(t, dir, map[string]string{"a.fake": big})
	m := acquire(t, dir, Options{Servers: []ServerConfig{fakeConfig(t, "deaf", "deaf", ".fake")}, RequestTimeout: time.Second, Settle: 500 * time.Millisecond})
	ctx := context.Background()
	m.Diagnostics(ctx, "a.fake")
	writeFiles(t, dir, map[string]string{"a.fake": big + big})
	began := time.Now()
	m.Diagnostics(ctx, "a.fake")
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("Diagnostics took %s with a server that does not read", took)
	}
	st := waitState(t, m, "deaf", StateFailed, 5*time.Second)
	if !strings.Contains(st.Reason, "did not read its input") {
		t.Errorf("reason %q", st.Reason)
	}
}

func TestCrashingServerRestartsOnceThenFails(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.fake": "x\n"})
	logs := t.TempDir()
	m := acquire(t, dir, Options{Servers: []ServerConfig{fakeConfig(t, "crashy", "crash", ".fake")}, LogDir: logs, Settle: time.Second})
	_, rep := m.Diagnostics(context.Background(), "a.fake")
	st := waitState(t, m, "crashy", StateFailed, 10*time.Second)
	if st.Restarts != 1 {
		t.Errorf("restarts = %d, want 1", st.Restarts)
	}
	if !strings.Contains(st.Reason, "again after a restart") || !strings.Contains(st.Reason, "simulated crash") || !strings.Contains(st.Reason, st.LogPath) || filepath.Dir(st.LogPath) != logs {
		t.Errorf("reason %q", st.Reason)
	}
	data, err := os.ReadFile(st.LogPath)
	if err != nil || strings.Count(string(data), "\nfake server: simulated crash\n") != 2 {
		t.Errorf("log %q (%v)", data, err)
	}
	if len(rep.Notes) == 0 {
		t.Errorf("report %+v says nothing of the crash", rep)
	}
	// It stays failed: a later call does not start it again.
	m.Sync(context.Background(), "a.fake")
	time.Sleep(100 * time.Millisecond)
	if st := m.Status()[0]; st.State != StateFailed || st.Restarts != 1 {
		t.Errorf("after another sync %+v", st)
	}
}

func TestAcquireSharesAndReleaseStops(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.fake": "BAD\n"})
	opts := Options{Workspace: dir, Servers: []ServerConfig{fakeConfig(t, "fake", "ok", ".fake")}, LogDir: t.TempDir()}
	m1, release1 := Acquire(opts)
	m2, release2 := Acquire(Options{Workspace: dir + string(filepath.Separator) + "."})
	if m1 != m2 {
		t.Fatal("two holds of one workspace got two managers")
	}
	if set, _ := m1.Diagnostics(context.Background(), "a.fake"); len(set) != 1 {
		t.Fatalf("diagnostics %+v", set)
	}
	release1()
	release1() // a second call does nothing
	if st := m2.Status()[0]; st.State != StateRunning {
		t.Fatalf("after the first release %+v", st)
	}
	began := time.Now()
	release2()
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("release took %s", took)
	}
	if st := m2.Status()[0]; st.State != StateStopped {
		t.Errorf("after the last release %+v", st)
	}
	if err := m2.Sync(context.Background(), "a.fake"); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("Sync after release: %v", err)
	}
	m3, release3 := Acquire(opts)
	defer release3()
	if m3 == m1 {
		t.Error("a released manager was handed out again")
	}
}

func TestFakeDefinitionAndTools(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"sub/a.fake": "first line\nsecond uses Thing here\n"})
	m := acquire(t, dir, Options{Servers: []ServerConfig{fakeConfig(t, "fake", "ok", ".fake")}})
	locs, err := m.Definition(context.Background(), "sub/a.fake", 2, 3)
	if err != nil || len(locs) != 1 || locs[0].String() != "sub/a.fake:1: first line" {
		t.Fatalf("Definition = %+v, %v", locs, err)
	}
	tools := Tools(m)
	res := tools[0].Run(context.Background(), nil, []byte(`{"path":"sub/a.fake","line":2,"symbol":"Thing"}`))
	if res.IsError || res.Content != "sub/a.fake:1: first line" || !slices.Equal(res.Paths, []string{"sub/a.fake"}) {
		t.Errorf("lsp_definition = %+v", res)
	}
	res = tools[0].Run(context.Background(), nil, []byte(`{"path":"sub/a.fake","line":2,"symbol":"Nothing"}`))
	if !res.IsError || !strings.Contains(res.Content, "does not occur on line 2") {
		t.Errorf("lsp_definition with a missing symbol = %+v", res)
	}
	res = tools[1].Run(context.Background(), nil, []byte(`{"path":"sub/a.fake","line":2,"column":3}`))
	if !res.IsError || !strings.Contains(res.Content, "does not offer references") {
		t.Errorf("lsp_references on a server without them = %+v", res)
	}
	res = tools[2].Run(context.Background(), nil, []byte(`{"path":"sub/a.fake","query":"x"}`))
	if !res.IsError || !strings.HasPrefix(res.Content, "lsp_symbols: give either path") {
		t.Errorf("lsp_symbols with both = %+v", res)
	}
}

func TestBrokenWorkspace(t *testing.T) {
	for _, ws := range []string{"", filepath.Join(t.TempDir(), "missing")} {
		m, release := Acquire(Options{Workspace: ws})
		_, rep := m.Diagnostics(context.Background(), "a.go")
		if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "workspace") {
			t.Errorf("%q: report %+v", ws, rep)
		}
		if err := m.Sync(context.Background(), "a.go"); err == nil {
			t.Errorf("%q: Sync succeeded", ws)
		}
		if m.Available() != nil || m.Start(context.Background()) != nil {
			t.Errorf("%q: a broken workspace has servers", ws)
		}
		release()
	}
}

func TestStartWarmsAvailableServers(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.fake": "x\n"})
	m := acquire(t, dir, Options{Servers: []ServerConfig{fakeConfig(t, "fake", "ok", ".fake"), fakeConfig(t, "other", "ok", ".other")}})
	sts := m.Start(context.Background())
	if len(sts) != 1 || sts[0].Name != "fake" || sts[0].State != StateRunning {
		t.Fatalf("Start = %+v", sts)
	}
	if st := m.Status()[1]; st.State != StateStopped {
		t.Errorf("a server without files was started: %+v", st)
	}
}

func TestGarbageOutputIsACrash(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.fake": "BAD\n"})
	m := acquire(t, dir, Options{Servers: []ServerConfig{fakeConfig(t, "garbage", "garbage", ".fake")}, Settle: time.Second})
	m.Diagnostics(context.Background(), "a.fake")
	st := waitState(t, m, "garbage", StateFailed, 10*time.Second)
	if st.Restarts != 1 || !strings.Contains(st.Reason, "its output could not be read") || !strings.Contains(st.Reason, "not a message header") {
		t.Errorf("status %+v", st)
	}
}
