// Package workbench is the engine's front door: the one place that opens
// Tally's store, turns saved settings, command-line flags and the
// environment into a session's configuration, builds the model client, and
// creates, lists, renames, deletes and exports sessions. The desktop app
// and the command line reach the engine through it and never open the
// store, read the settings or start the scripted demo model themselves, so
// both always map the same settings the same way.
package workbench

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/tally-dev/tally/config"
	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/cycle"
	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/internal/ownpaths"
	"github.com/tally-dev/tally/storage"
)

// The settings and endpoint types of the front door.
type (
	// Settings are the values a person edits on the settings page.
	Settings = config.Settings
	// ShellSettings are the user's additions to the command policy.
	ShellSettings = config.ShellSettings
	// Price is a model's price in US dollars per million tokens.
	Price = config.Price
	// Resolved is the endpoint a session will use.
	Resolved = config.Resolved
	// Flags are command-line overrides of the endpoint.
	Flags = config.Flags
	// SessionInfo is a stored session's header: ID, title, workspace,
	// model, cycle, times.
	SessionInfo = storage.Session
)

// Values of Settings fields.
const (
	CompactionAuto = config.CompactionAuto
	CompactionAsk  = config.CompactionAsk
	CompactionOff  = config.CompactionOff
	KeyInKeychain  = config.KeyInKeychain
	// KeepUnderAuto and KeepUnderWindow are the choices of
	// Settings.KeepUnder besides a number of tokens.
	KeepUnderAuto   = config.KeepUnderAuto
	KeepUnderWindow = config.KeepUnderWindow
)

// ParseKeepUnder reads a Settings.KeepUnder choice as agent.Config.KeepUnder:
// rewrite.KeepAuto for auto (the default), 0 for the window's default, or a
// level in tokens.
func ParseKeepUnder(v string) (int, error) { return config.ParseKeepUnder(v) }

// Errors from opening the store and finding sessions, matched with
// errors.Is.
var (
	ErrLocked      = storage.ErrLocked      // another Tally holds the data
	ErrNewerFormat = storage.ErrNewerFormat // written by a newer Tally
	ErrCorrupt     = storage.ErrCorrupt     // the file is damaged
	ErrNotFound    = storage.ErrNotFound    // no such session
)

// Mask renders a secret for display: its last four characters at most.
func Mask(key string) string { return config.Mask(key) }

// Workbench is an open data directory. It is safe for concurrent use.
type Workbench struct {
	store *storage.Store
	env   func(string) string

	mu       sync.Mutex
	settings Settings
	demo     *demo.Model // made on first use
	// lender is the Workbench this one is a view of (see Borrow), nil
	// for the one that opened the store: Close leaves the store open, and
	// the settings are the lender's.
	lender *Workbench
	// holder is who opens sessions through this Workbench; holders, who
	// has each session open (shared with the lender).
	holder  *holder
	holders *sessionHolders
}

// DataPath returns the store file of dataDir, or of the default data
// directory when dataDir is "".
func DataPath(dataDir string) (string, error) {
	if dataDir != "" {
		return filepath.Join(dataDir, "tally.db"), nil
	}
	return storage.DefaultPath()
}

// Open opens the store of dataDir ("" for the default) and loads the saved
// settings. env looks up environment variables (os.Getenv when nil). A
// store that cannot be opened is an error matching ErrLocked,
// ErrNewerFormat or ErrCorrupt where one applies; unreadable settings are
// returned as settingsErr beside a usable Workbench with zero settings.
func Open(dataDir string, env func(string) string) (w *Workbench, settingsErr error, err error) {
	return open(dataDir, env, storage.Options{})
}

// TryOpen is Open without waiting for the store's lock: while another
// Tally holds the store it fails at once with an error matching
// ErrLocked, where Open waits storage.DefaultTimeout first. The command
// line uses it to tell the desktop app, which holds the lock as long as
// it is open, from a command about to finish.
func TryOpen(dataDir string, env func(string) string) (w *Workbench, settingsErr error, err error) {
	return open(dataDir, env, storage.Options{Timeout: -1})
}

func open(dataDir string, env func(string) string, o storage.Options) (*Workbench, error, error) {
	path, err := DataPath(dataDir)
	if err != nil {
		return nil, nil, err
	}
	o.Search = &searchRules
	st, err := storage.Open(path, o)
	if err != nil {
		return nil, nil, err
	}
	// Sessions of every other data folder hide this one from their
	// commands (see ownpaths.Hidden).
	ownpaths.Remember(filepath.Dir(path))
	if env == nil {
		env = os.Getenv
	}
	w := &Workbench{store: st, env: env, holder: &holder{appHolder}, holders: &sessionHolders{open: map[string]*holding{}}}
	w.settings, err = config.Load(st)
	return w, err, nil
}

// Borrow returns a view of w for a command run on another process's
// behalf (a command the app runs for the command line, or an editor's
// tally acp): it reads and writes the same store and w's settings, looks
// up environment variables with env (w's when nil), and its Close does
// nothing, so the command cannot close the app's store. Sessions it opens
// for turns are h's: while it has one open, opening that session through
// w or another view fails with an error matching ErrInUse that names h,
// and the reverse.
func (w *Workbench) Borrow(h Holder, env func(string) string) *Workbench {
	root := w
	if w.lender != nil {
		root = w.lender
	}
	if env == nil {
		env = w.env
	}
	return &Workbench{store: w.store, env: env, lender: root, holder: &holder{h}, holders: w.holders}
}

// Close closes the store; on a borrowed view it does nothing.
func (w *Workbench) Close() error {
	if w.lender != nil {
		return nil
	}
	books.Delete(w.store) // the efforts read from it
	return w.store.Close()
}

// Path is the store file's path.
func (w *Workbench) Path() string { return w.store.Path() }

// Damage reports why the store's file failed the consistency check run
// when it was opened (an error wrapping ErrCorrupt that says how to
// recover), or nil: a damaged store can be read, never written.
func (w *Workbench) Damage() error { return w.store.Damage() }

// Settings returns the saved settings.
func (w *Workbench) Settings() Settings {
	if w.lender != nil {
		return w.lender.Settings()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.settings
}

// SaveSettings stores s (the API key in the OS keychain where one answers)
// and makes it the settings of sessions configured from now on.
func (w *Workbench) SaveSettings(s Settings) error {
	kept, err := config.Keep(w.store, s)
	if err != nil {
		return err
	}
	if w.lender != nil {
		w = w.lender
	}
	w.mu.Lock()
	w.settings = kept
	w.mu.Unlock()
	return nil
}

// Resolve merges flags, the environment and the saved settings into the
// endpoint a session will use.
func (w *Workbench) Resolve(f Flags) Resolved {
	return config.Resolve(f, w.env, w.Settings())
}

// ResolveWith is Resolve with settings s instead of the saved ones (for a
// settings form testing values not yet saved).
func (w *Workbench) ResolveWith(f Flags, s Settings) Resolved {
	return config.Resolve(f, w.env, s)
}

// Sessions lists the stored sessions, most recently updated first.
func (w *Workbench) Sessions() ([]SessionInfo, error) { return w.store.Sessions() }

// Session returns one stored session's header, or an error matching
// ErrNotFound.
func (w *Workbench) Session(id string) (SessionInfo, error) { return w.store.Session(id) }

// Rename sets a session's title.
func (w *Workbench) Rename(id, title string) error { return agent.Rename(w.store, id, title) }

// Delete removes a session with all its data.
func (w *Workbench) Delete(id string) error {
	w.efforts().forget(id)
	return agent.Delete(w.store, id)
}

// Archives returns a session's closed cycles, oldest first, each with
// every message it ever held: those a compaction or purge superseded
// before the cycle closed come first (as in Export), then the cycle's log.
func (w *Workbench) Archives(id string) ([]cycle.Archive, error) {
	return rewrite.ReadArchives(w.store, id)
}

// Ledger returns a session's usage rows, oldest first.
func (w *Workbench) Ledger(id string) ([]agent.LedgerRow, error) {
	return agent.ReadLedger(w.store, id)
}
