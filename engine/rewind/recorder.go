package rewind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/tool"
)

// recorder is the session's tool.Recorder: it records every change
// the tools make in the session's checkpoints, or refuses the change with
// the reason checkpoints are unavailable.
type recorder struct {
	mu  sync.Mutex
	rec *filehistory.Recorder // the workspace's
	// extra are the additional folders' recorders.
	extra []extraRec
	err   error // why changes cannot be recorded now
	// cancel is set once the first turn's snapshot was started in the
	// background (see prepare) and ends it early; preparing is done when
	// it has ended.
	cancel    context.CancelFunc
	preparing sync.WaitGroup
}

// prepare takes the workspace's snapshot in the background the first
// time a turn starts (filehistory.Recorder.Prepare), while the model
// thinks, so that the turn's first command does not wait for the whole
// workspace to be listed and read. A failure is left for BeforeShell to
// meet and report.
func (f *recorder) prepare() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancel != nil || f.rec == nil || f.err != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.preparing.Add(1)
	go func() {
		defer f.preparing.Done()
		defer cancel()
		_ = f.each(func(r *filehistory.Recorder) error { return r.Prepare(ctx) })
	}()
}

// extraRec is the recorder of an additional folder, or why there is none.
type extraRec struct {
	root root
	rec  *filehistory.Recorder
	err  error
}

// each calls fn on the workspace's recorder, then on every additional
// folder's, and returns the first error; it stops there.
func (f *recorder) each(fn func(*filehistory.Recorder) error) error {
	if err := fn(f.rec); err != nil {
		return err
	}
	for _, x := range f.extra {
		if x.rec == nil {
			continue
		}
		if err := fn(x.rec); err != nil {
			return fmt.Errorf("%s: %w", x.root.dir, err)
		}
	}
	return nil
}

// route returns the recorder of the folder rel (as the tools show it)
// lies in, and rel's path inside it.
func (f *recorder) route(rel string) (*filehistory.Recorder, string, error) {
	r, err := f.get()
	if err != nil {
		return nil, "", err
	}
	for _, x := range f.extra {
		if in, ok := x.root.own(rel); ok {
			return x.rec, in, x.err
		}
	}
	return r, rel, nil
}

// stopPreparing ends a snapshot under way (it leaves the workspace as it
// was) and waits for it.
func (f *recorder) stopPreparing() {
	f.mu.Lock()
	cancel := f.cancel
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	f.preparing.Wait()
}

func (f *recorder) get() (*filehistory.Recorder, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	return f.rec, nil
}

func (f *recorder) fail(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

// BeforeWrite records rel's state before a tool writes it.
func (f *recorder) BeforeWrite(rel string) error {
	r, in, err := f.route(rel)
	if err != nil {
		return err
	}
	return r.BeforeWrite(in)
}

// AfterWrite records rel's state after a tool wrote it.
func (f *recorder) AfterWrite(rel string) error {
	r, in, err := f.route(rel)
	if err != nil {
		return err
	}
	return r.AfterWrite(in)
}

// BeforeShell saves the workspace and the additional folders before a
// command runs; a folder whose checkpoints are unavailable refuses the
// command, since it could change files there.
func (f *recorder) BeforeShell() error {
	if _, err := f.get(); err != nil {
		return err
	}
	for _, x := range f.extra {
		if x.err != nil {
			return x.err
		}
	}
	return f.each((*filehistory.Recorder).BeforeShell)
}

// AfterShell records what a command changed in every folder and returns
// the files it created or modified, as the tools show them.
func (f *recorder) AfterShell() ([]string, error) {
	r, err := f.get()
	if err != nil {
		return nil, err
	}
	ch, err := r.AfterShell()
	out := append(append([]string(nil), ch.Created...), ch.Modified...)
	for _, x := range f.extra {
		if x.rec == nil {
			continue
		}
		ch, xerr := x.rec.AfterShell()
		for _, p := range append(ch.Created, ch.Modified...) {
			out = append(out, x.root.show(p))
		}
		err = errors.Join(err, xerr)
	}
	return out, err
}

// Limits are the limits of a workspace's checkpoints: the size
// cap (0: filehistory.DefaultStoreBytes), and the files whose content is
// never stored, so that credentials do not reach Tally's data file: those
// on the secret-file deny list secretFiles (nil: the default list) and
// those holding a private key or any credential the intake redaction
// rules find (engine/secrets). Such files are recorded as changed but not
// restorable. Every host opening checkpoints uses this one rule, since an
// Open replaces the limits of the workspace for the whole process.
func Limits(storeBytes int64, secretFiles []string) filehistory.Limits {
	if secretFiles == nil {
		secretFiles = tool.DefaultSecretFiles()
	}
	return filehistory.Limits{StoreBytes: storeBytes, Refuse: func(rel string, content []byte) string {
		switch {
		case tool.MatchSecretFile(secretFiles, rel):
			return "it is on the secret-file deny list, so its content is never stored"
		case bytes.Contains(content, []byte("PRIVATE KEY-----")):
			return "it holds a private key, so its content is never stored"
		case bytes.IndexByte(content, 0) >= 0:
			return "" // binary: the credential rules are about text
		}
		// The same rules that clean tool output at intake: a file holding
		// a token is never copied into the data file.
		if _, found := secrets.Redact(string(content)); len(found) > 0 {
			return "it holds a credential (" + found[0].Rule + "), so its content is never stored"
		}
		return ""
	}}
}
