package storage

import (
	"errors"
	"fmt"
)

// These errors can be returned by Open and by the methods of Store and Tx.
// The errors actually returned carry a more specific message, naming the file,
// session or key involved; test for them with errors.Is.
var (
	// ErrLocked is returned by Open when another process, or another Store in
	// this process, holds the database file open for longer than
	// Options.Timeout.
	ErrLocked = errors.New("the database is already open by another Tally; close it or use --data to pick another data directory")

	// ErrNewerFormat is returned by Open when the file was written by a newer
	// version of Tally whose format this version cannot read. The file is not
	// modified.
	ErrNewerFormat = errors.New("the database was written by a newer Tally; upgrade Tally to open it")

	// ErrCorrupt is returned when the file is not a readable Tally database or
	// a record inside it cannot be decoded. Open never modifies such a file.
	ErrCorrupt = errors.New("the database is damaged; it was left untouched, restore a backup or move it aside")

	// ErrNotFound is returned when a session or blob that must exist does not.
	ErrNotFound = errors.New("not found; check the ID or create it first")

	// ErrInvalid is returned when an argument can never be valid, such as an
	// empty session ID, a cycle below 1 or an unknown Kind.
	ErrInvalid = errors.New("invalid argument; see the documentation of the method called")

	// ErrReadOnly is returned by a Tx write method called inside Store.View.
	ErrReadOnly = errors.New("write attempted in a read-only transaction; use Store.Update for writes")

	// ErrTxClosed is returned by a Tx method called after its transaction
	// function has returned.
	ErrTxClosed = errors.New("transaction already finished; use the Tx only inside its View or Update function")

	// ErrClosed is returned by Store methods called after Store.Close.
	ErrClosed = errors.New("the store is closed; open it again with Open")
)

// storageError is an error with a specific message that matches a sentinel
// error with errors.Is and, optionally, wraps the underlying cause.
type storageError struct {
	msg  string
	errs []error
}

func (e *storageError) Error() string   { return e.msg }
func (e *storageError) Unwrap() []error { return e.errs }

// newError returns an error with the formatted message that matches sentinel
// and, if cause is not nil, cause. The message is a sentence for the
// person who will read it: what went wrong and what to do, with no
// package prefix.
func newError(sentinel, cause error, format string, args ...any) error {
	errs := []error{sentinel}
	if cause != nil {
		errs = append(errs, cause)
	}
	return &storageError{msg: fmt.Sprintf(format, args...), errs: errs}
}

// wrapError returns an error with the formatted message that wraps cause and
// matches no sentinel.
func wrapError(cause error, format string, args ...any) error {
	return &storageError{msg: fmt.Sprintf(format, args...), errs: []error{cause}}
}
