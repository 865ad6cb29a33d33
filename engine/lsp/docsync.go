package lsp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/tally-dev/tally/internal/safefile"
)

// MaxFileSize is the largest file synced to the servers, in bytes; a
// larger one is refused.
const MaxFileSize = 8 << 20

// document is a workspace file as Tally last synced it. Versions count up
// from 1 and are the same for every server; a deleted file keeps its
// entry, so servers close it and a file that comes back reopens with a
// higher version.
type document struct {
	rel     string
	text    string
	version int32
	deleted bool
}

// sentDoc is what a server was sent of one document.
type sentDoc struct {
	version int32
	at      time.Time // when the sending began
	written bool      // the write completed
}

// Sync brings every server that handles one of paths up to date with the
// files' current content on disk: didOpen the first time, didChange with
// the full text (and didSave where the server asks for it) when the
// content changed, didClose when a file was deleted. Servers that are not
// running yet start in the background and are sent the files once they
// are; Sync itself never waits for a server. Paths are absolute or
// relative to the workspace; one outside it, not a regular file, or over
// MaxFileSize is refused, and the error (one sentence per refused path)
// says so while the other paths are still synced.
func (m *Manager) Sync(ctx context.Context, paths ...string) error {
	_, err := m.sync(ctx, paths)
	return err
}

// sync is Sync returning the workspace-relative paths it synced (deleted
// ones included).
func (m *Manager) sync(ctx context.Context, paths []string) ([]string, error) {
	if err := m.usable(); err != nil {
		return nil, err
	}
	var errs []error
	var rels []string
	for _, p := range paths {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		rel, err := m.rel(p)
		if err == nil {
			err = m.load(rel)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !slices.Contains(rels, rel) {
			rels = append(rels, rel)
		}
	}
	for _, s := range m.servers {
		if !slices.ContainsFunc(rels, s.cfg.handles) {
			continue
		}
		s.ensure()
		if c := s.live(); c != nil {
			c.wake()
		}
	}
	return rels, errors.Join(errs...)
}

// load reads the file rel and records its content as the document's.
func (m *Manager) load(rel string) error {
	data, truncated, err := safefile.ReadIn(m.root, rel, MaxFileSize)
	deleted := errors.Is(err, fs.ErrNotExist)
	switch {
	case deleted:
	case err != nil:
		return fmt.Errorf("the file %s cannot be read for the language servers (%w); give a regular file inside the workspace", rel, err)
	case truncated:
		return fmt.Errorf("the file %s is larger than %d MB, so the language servers are not sent it; check a smaller file", rel, MaxFileSize>>20)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.docs[rel]
	switch {
	case d == nil && deleted:
		return nil // never synced, nothing to close
	case d == nil:
		m.docs[rel] = &document{rel: rel, text: string(data), version: 1}
	case deleted:
		if !d.deleted {
			d.deleted, d.text = true, ""
			d.version++
		}
	case d.deleted || d.text != string(data):
		d.deleted, d.text = false, string(data)
		d.version++
	}
	return nil
}

// doc returns a copy of the document rel, and whether there is one.
func (m *Manager) doc(rel string) (document, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.docs[rel]
	if d == nil {
		return document{}, false
	}
	return *d, true
}

// docsFor returns copies of the documents the server handles.
func (m *Manager) docsFor(s *server) []document {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []document
	for rel, d := range m.docs {
		if s.cfg.handles(rel) {
			out = append(out, *d)
		}
	}
	slices.SortFunc(out, func(a, b document) int {
		switch {
		case a.rel < b.rel:
			return -1
		case a.rel > b.rel:
			return 1
		}
		return 0
	})
	return out
}

// syncLoop is the one writer of document notifications of c: each wake
// brings the server up to date with the manager's documents.
func (s *server) syncLoop(c *conn) {
	for {
		select {
		case <-c.done:
			return
		case <-c.kick:
		}
		s.push(c)
	}
}

// push sends c what changed in the documents since the last push.
func (s *server) push(c *conn) {
	for _, d := range s.m.docsFor(s) {
		s.mu.Lock()
		sent, isOpen := c.open[d.rel]
		live := s.c == c
		s.mu.Unlock()
		if !live {
			return
		}
		if (d.deleted && !isOpen) || (isOpen && sent.version == d.version) {
			continue
		}
		uri := fileURI(s.m.abs(d.rel))
		s.mu.Lock()
		if d.deleted {
			delete(c.open, d.rel)
		} else {
			c.open[d.rel] = sentDoc{version: d.version, at: time.Now()}
		}
		s.mu.Unlock()
		var err error
		switch {
		case d.deleted:
			err = s.notify(c, "textDocument/didClose", didCloseTextDocumentParams{
				TextDocument: textDocumentIdentifier{URI: uri}})
		case !isOpen:
			err = s.notify(c, "textDocument/didOpen", didOpenTextDocumentParams{
				TextDocument: textDocumentItem{URI: uri, LanguageID: s.cfg.languageFor(d.rel), Version: d.version, Text: d.text}})
		default:
			err = s.notify(c, "textDocument/didChange", didChangeTextDocumentParams{
				TextDocument:   versionedTextDocumentIdentifier{URI: uri, Version: d.version},
				ContentChanges: []textDocumentContentChangeEvent{{Text: d.text}}})
		}
		if err == nil && !d.deleted && c.caps.save {
			p := didSaveTextDocumentParams{TextDocument: textDocumentIdentifier{URI: uri}}
			if c.caps.saveText {
				p.Text = &d.text
			}
			err = s.notify(c, "textDocument/didSave", p)
		}
		if err != nil {
			return // the connection ended; its watcher reports it
		}
		s.mu.Lock()
		if sd, ok := c.open[d.rel]; ok && sd.version == d.version {
			sd.written = true
			c.open[d.rel] = sd
		}
		s.mu.Unlock()
		s.m.notify()
	}
}

// connFor waits until the server of the file rel is running and has been
// written the document's current version, and returns its connection. It
// starts the server when needed and waits at most StartTimeout for the
// start and RequestTimeout for the write, and never past ctx.
func (s *server) connFor(ctx context.Context, rel string) (*conn, error) {
	s.ensure()
	want, _ := s.m.doc(rel)
	startBy := time.Now().Add(s.m.opts.StartTimeout)
	var writeBy time.Time
	for {
		s.m.mu.Lock()
		changed := s.m.changed
		s.m.mu.Unlock()
		s.mu.Lock()
		state, reason, c := s.state, s.reason, s.c
		var sent sentDoc
		if c != nil {
			sent = c.open[rel]
		}
		s.mu.Unlock()
		now := time.Now()
		switch state {
		case StateRunning:
			if want.version == 0 || sent.written && sent.version >= want.version {
				return c, nil
			}
			if writeBy.IsZero() {
				writeBy = now.Add(s.m.opts.RequestTimeout)
				c.wake()
			}
			if now.After(writeBy) {
				return nil, fmt.Errorf("the language server %q was not sent %s within %s; try again", s.cfg.Name, rel, s.m.opts.RequestTimeout)
			}
		case StateStarting:
			if now.After(startBy) {
				return nil, fmt.Errorf("the language server %q is still starting after %s; try again shortly", s.cfg.Name, s.m.opts.StartTimeout)
			}
		case StateStopped:
			if s.m.isClosed() {
				return nil, errors.New("the language servers of this workspace were released; acquire the manager again")
			}
			s.ensure()
		default:
			if reason == "" {
				reason = s.status().Reason
			}
			return nil, errors.New(reason)
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}
