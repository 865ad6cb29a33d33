package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// hunkApprover approves every call, accepting the hunks in accept.
type hunkApprover struct {
	accept []bool
	seen   []ApprovalRequest
}

func (h *hunkApprover) Approve(_ context.Context, req ApprovalRequest) (Decision, error) {
	h.seen = append(h.seen, req)
	return Approve, nil
}

func (h *hunkApprover) ApproveHunks(_ context.Context, req ApprovalRequest) (Decision, []bool, error) {
	h.seen = append(h.seen, req)
	return Approve, h.accept, nil
}

// threeHunks is a file whose edit below changes three far-apart lines.
func threeHunks() (before, after string) {
	var b, a strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
		switch i {
		case 5, 20, 35:
			fmt.Fprintf(&a, "LINE %d\n", i)
		default:
			fmt.Fprintf(&a, "line %d\n", i)
		}
	}
	return b.String(), a.String()
}

// gated runs one call through a gate asking ap, as the engine does.
func gated(t *testing.T, ap Approver, env *Env, tl Tool, args string) Result {
	t.Helper()
	g := NewGate(ap)
	v, err := g.Decide(context.Background(), env, tl, "call_1", args)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Allowed {
		return v.Refusal
	}
	return tl.Run(v.Ctx, env, []byte(args))
}

func TestRejectOneOfThreeHunks(t *testing.T) {
	before, after := threeHunks()
	ws, env := newWorkspace(t, map[string]string{"f.txt": before})
	ap := &hunkApprover{accept: []bool{true, false, true}}
	res := gated(t, ap, env, WriteFile(), fmt.Sprintf(`{"path":"f.txt","content":%q}`, after))
	if res.IsError {
		t.Fatalf("result %q", res.Content)
	}
	if len(ap.seen) != 1 || ap.seen[0].Diff == nil || len(ap.seen[0].Diff.Hunks) != 3 {
		t.Fatalf("approval request diff = %+v", ap.seen)
	}
	want := strings.Replace(strings.Replace(before, "line 5\n", "LINE 5\n", 1), "line 35\n", "LINE 35\n", 1)
	if got := readWS(t, ws, "f.txt"); got != want {
		t.Errorf("file holds\n%s\nwant\n%s", got, want)
	}
	mustContain(t, res.Content, "hunk 2 of 3 (@@ -17,7 +17,7 @@) was not applied")
}

func TestEditFileHunks(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		if i%15 == 0 {
			b.WriteString("x := old()\n")
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	before := b.String()
	ws, env := newWorkspace(t, map[string]string{"f.go": before})
	ap := &hunkApprover{accept: []bool{false, true}}
	res := gated(t, ap, env, EditFile(), `{"path":"f.go","old_string":"old()","new_string":"fresh()","replace_all":true}`)
	if res.IsError || len(ap.seen[0].Diff.Hunks) != 2 {
		t.Fatalf("result %q, diff %+v", res.Content, ap.seen[0].Diff)
	}
	want := strings.Replace(before, "x := old()\nline 31", "x := fresh()\nline 31", 1)
	if got := readWS(t, ws, "f.go"); got != want {
		t.Errorf("file holds\n%s\nwant\n%s", got, want)
	}
	mustContain(t, res.Content, "hunk 1 of 2", "was not applied")
}

func TestHunksAllRejectedWritesNothing(t *testing.T) {
	before, after := threeHunks()
	ws, env := newWorkspace(t, map[string]string{"f.txt": before})
	res := gated(t, &hunkApprover{accept: []bool{false, false, false}}, env, WriteFile(), fmt.Sprintf(`{"path":"f.txt","content":%q}`, after))
	if !res.IsError || readWS(t, ws, "f.txt") != before {
		t.Fatalf("result %q; file changed", res.Content)
	}
	mustContain(t, res.Content, "rejected every hunk", "hunk 3 of 3")
}

func TestHunksRefusedWhenFileChangedAfterReview(t *testing.T) {
	before, after := threeHunks()
	ws, env := newWorkspace(t, map[string]string{"f.txt": before})
	args := fmt.Sprintf(`{"path":"f.txt","content":%q}`, after)
	v, err := NewGate(&hunkApprover{accept: []bool{true}}).Decide(context.Background(), env, WriteFile(), "c", args)
	if err != nil || !v.Allowed {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "f.txt"), []byte("someone else\n"), 0o644)
	res := WriteFile().Run(v.Ctx, env, []byte(args))
	if !res.IsError || readWS(t, ws, "f.txt") != "someone else\n" {
		t.Fatalf("result %q", res.Content)
	}
	mustContain(t, res.Content, "changed after the user reviewed")
}

func TestApprovalDiffOfNewFile(t *testing.T) {
	_, env := newWorkspace(t, nil)
	ap := &hunkApprover{}
	res := gated(t, ap, env, WriteFile(), `{"path":"new/n.txt","content":"a\nb\n"}`)
	if res.IsError || ap.seen[0].Diff == nil || !ap.seen[0].Diff.New {
		t.Fatalf("result %q, request %+v", res.Content, ap.seen)
	}
	mustContain(t, ap.seen[0].Diff.Unified(), "--- /dev/null", "+++ b/new/n.txt", "+a")
}

// fakeRecorder logs the recorder calls and fails the ones named in fail.
type fakeRecorder struct {
	mu   sync.Mutex
	log  []string
	fail string
}

func (f *fakeRecorder) note(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, s)
	if f.fail != "" && strings.HasPrefix(s, f.fail) {
		return errors.New("disk full")
	}
	return nil
}
func (f *fakeRecorder) BeforeWrite(rel string) error  { return f.note("before " + rel) }
func (f *fakeRecorder) AfterWrite(rel string) error   { return f.note("after " + rel) }
func (f *fakeRecorder) BeforeShell() error            { return f.note("shell-before") }
func (f *fakeRecorder) AfterShell() ([]string, error) { return nil, f.note("shell-after") }

func TestToolsTellTheRecorder(t *testing.T) {
	ws, env := newWorkspace(t, map[string]string{"a.txt": "one\n"})
	rec := &fakeRecorder{}
	env.Recorder = rec
	call(t, WriteFile(), env, map[string]string{"path": "b.txt", "content": "x"})
	call(t, EditFile(), env, map[string]string{"path": "a.txt", "old_string": "one", "new_string": "two"})
	call(t, EditFile(), env, map[string]string{"path": "a.txt", "old_string": "missing", "new_string": "two"})
	if err := os.Symlink("a.txt", filepath.Join(ws, "link")); err == nil {
		call(t, WriteFile(), env, map[string]string{"path": "link", "content": "three\n"})
	}
	got := strings.Join(rec.log, ", ")
	if want := "before b.txt, after b.txt, before a.txt, after a.txt, before a.txt, after a.txt"; got != want {
		t.Errorf("recorder calls: %s\nwant %s", got, want)
	}

	rec.fail = "before"
	res := call(t, WriteFile(), env, map[string]string{"path": "a.txt", "content": "lost"})
	if !res.IsError || readWS(t, ws, "a.txt") != "three\n" {
		t.Fatalf("a failed BeforeWrite still wrote: %q", res.Content)
	}
	mustContain(t, res.Content, "was not changed", "disk full")
}

func TestRunShellTellsTheRecorder(t *testing.T) {
	ws, env := newWorkspace(t, nil)
	rec := &fakeRecorder{}
	env.Recorder = rec
	call(t, RunShell(), env, map[string]string{"command": "echo hi > out.txt"})
	if got := strings.Join(rec.log, ", "); got != "shell-before, shell-after" {
		t.Errorf("recorder calls: %s", got)
	}
	rec.fail = "shell-before"
	res := call(t, RunShell(), env, map[string]string{"command": "echo again > again.txt"})
	if _, err := os.Stat(filepath.Join(ws, "again.txt")); err == nil || !res.IsError {
		t.Fatalf("the command ran although BeforeShell failed: %q", res.Content)
	}
	mustContain(t, res.Content, "was not run", "disk full")
}
