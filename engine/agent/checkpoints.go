package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/tally-dev/tally/engine/filehistory"
	"github.com/tally-dev/tally/engine/secrets"
	"github.com/tally-dev/tally/engine/tool"
)

// fileRecorder is the session's tool.Recorder: it records every change
// the tools make in the session's checkpoints, or refuses the change with
// the reason checkpoints are unavailable.
type fileRecorder struct {
	mu  sync.Mutex
	rec *filehistory.Recorder
	err error // why changes cannot be recorded now
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
func (f *fileRecorder) prepare() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancel != nil || f.rec == nil || f.err != nil {
		return
	}
	r := f.rec
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.preparing.Add(1)
	go func() {
		defer f.preparing.Done()
		defer cancel()
		_ = r.Prepare(ctx)
	}()
}

// stopPreparing ends a snapshot under way (it leaves the workspace as it
// was) and waits for it.
func (f *fileRecorder) stopPreparing() {
	f.mu.Lock()
	cancel := f.cancel
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	f.preparing.Wait()
}

func (f *fileRecorder) get() (*filehistory.Recorder, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	return f.rec, nil
}

func (f *fileRecorder) fail(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

// BeforeWrite records rel's state before a tool writes it.
func (f *fileRecorder) BeforeWrite(rel string) error {
	r, err := f.get()
	if err != nil {
		return err
	}
	return r.BeforeWrite(rel)
}

// AfterWrite records rel's state after a tool wrote it.
func (f *fileRecorder) AfterWrite(rel string) error {
	r, err := f.get()
	if err != nil {
		return err
	}
	return r.AfterWrite(rel)
}

// BeforeShell saves the workspace before a command runs.
func (f *fileRecorder) BeforeShell() error {
	r, err := f.get()
	if err != nil {
		return err
	}
	return r.BeforeShell()
}

// AfterShell records what a command changed and returns the files it
// created or modified.
func (f *fileRecorder) AfterShell() ([]string, error) {
	r, err := f.get()
	if err != nil {
		return nil, err
	}
	ch, err := r.AfterShell()
	return append(append([]string(nil), ch.Created...), ch.Modified...), err
}

// CheckpointLimits are the limits of a workspace's checkpoints: the size
// cap (0: filehistory.DefaultStoreBytes), and the files whose content is
// never stored, so that credentials do not reach Tally's data file: those
// on the secret-file deny list secretFiles (nil: the default list) and
// those holding a private key or any credential the intake redaction
// rules find (engine/secrets). Such files are recorded as changed but not
// restorable. Every host opening checkpoints uses this one rule, since an
// Open replaces the limits of the workspace for the whole process.
func CheckpointLimits(storeBytes int64, secretFiles []string) filehistory.Limits {
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

// openCheckpoints opens the checkpoints of the session's workspace, for
// reading (Changes, RewindPlan); a workspace that cannot be opened leaves
// them unavailable, which the methods that need them report.
func (s *Session) openCheckpoints() {
	ws, err := filehistory.Open(s.cfg.Store, s.meta.Workspace, CheckpointLimits(s.cfg.CheckpointBytes, s.cfg.Shell.SecretFiles))
	if err != nil {
		s.ckptErr = err
		return
	}
	s.ckpt = ws
}

// startRecording opens the session's recorder and hands it to the tools.
// Without one, every tool that changes files refuses, saying why: a change
// that could not be undone is never made silently.
func (s *Session) startRecording() {
	f := &fileRecorder{}
	s.env.Recorder = f
	s.recorder = f
	if s.ckpt == nil {
		f.fail(fmt.Errorf("file checkpoints are unavailable (%v)", s.ckptErr))
		return
	}
	rec, err := s.ckpt.Recorder(s.meta.ID)
	if err != nil {
		f.fail(err)
		return
	}
	f.rec = rec
}

// beginTurnCheckpoint starts the checkpoint of user turn n. When it
// cannot be started, the tools refuse to change files for the turn rather
// than record the changes against the wrong turn.
func (s *Session) beginTurnCheckpoint(n int) {
	f := s.recorder
	if f == nil || f.rec == nil {
		return
	}
	err := f.rec.BeginTurn(n)
	if err != nil {
		err = fmt.Errorf("the checkpoint of turn %d could not be started (%w)", n, err)
	}
	f.fail(err)
	if s.cfg.PrepareSnapshots {
		f.prepare()
	}
}

// checkpoints returns the workspace's checkpoints, or an error saying
// why they cannot be read.
func (s *Session) checkpoints() (*filehistory.Workspace, error) {
	if s.ckpt == nil {
		return nil, fmt.Errorf("the file checkpoints of %s cannot be read (%v); check that the workspace folder exists", s.meta.Workspace, s.ckptErr)
	}
	return s.ckpt, nil
}

// Close ends the session's recording of file changes: a closed session's
// checkpoints are the first dropped when the store passes its size limit.
// The session stays readable; a later Open records again. Its MCP servers
// are stopped, and its share of the workspace's language servers given back.
func (s *Session) Close() error {
	s.mcpRun.Close()
	s.lsp.Close()
	s.hooks.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.env.TempDir != "" {
		// Commands died with their calls; nothing uses it any more.
		os.RemoveAll(s.env.TempDir)
	}
	f := s.recorder
	if f == nil || f.rec == nil {
		return nil
	}
	f.stopPreparing() // a snapshot under way ends before its recorder closes
	err := f.rec.Close()
	f.fail(errors.New("the session was closed; open it again to change files"))
	return err
}
