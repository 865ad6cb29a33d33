/*
Package storage implements Tally's persistence layer on top of a single bbolt
database file. It stores sessions, append-only message logs, content-addressed
blobs, append-only record lists, per-session state and global settings. Every
write goes through one serializable bbolt transaction that is fsynced on
commit, so a step the caller has seen committed survives a crash of the
process.

The package knows nothing of engine policy. Apart from the small Session
record, values are opaque bytes: the engine decides what a log message, a
ledger row or a rebuild record contains, and storage only promises to keep
them, in order, until the session is deleted.

# Basics

There are only a few types in storage: Store, Tx, Session and Record. A Store
is an open database file. It is created with Open, which takes an exclusive
lock on the file, so only one Tally process can use a data directory at a
time; a second Open fails with ErrLocked after Options.Timeout instead of
waiting forever.

Reads happen inside Store.View and writes inside Store.Update. Update runs its
function in exactly one read-write transaction: if the function returns an
error, or if any write method called on the Tx returned an error, nothing is
written. Any number of View transactions may run alongside a single Update.
Store also has a method for each Tx operation that runs it in a transaction of
its own, for callers that only need one operation.

A session's data is laid out as follows. The session itself is a JSON record
keyed by its ID. Its log is divided into cycles; each message appended to a
cycle gets a sequence number that is unique within the session and larger
than any sequence handed out before, including by a log that was later
replaced with ReplaceLog. Rebuild, status, ledger and archive records are
append-only lists, one per Kind, with sequence numbers of their own. Small
named values of per-session state sit next to them. Deleting the session
removes all of it. Blobs are shared by all sessions, keyed by the hex SHA-256
of their content, and are never removed by DeleteSession.

# Search index

A Store opened with Options.Search keeps a search index of every
session's history: the lowercased text of each log message and of each
text a record of SearchRules.Kinds carries (the engine's rules say what
that text is; storage gives the bytes no meaning). Each text sits under
its session with a signature of its trigrams and bigrams, a bit set
sized to the text, so Tx.MatchTexts tests a query's trigrams (or, for a
word of two bytes, its bigram) against the signatures and
verifies only the texts that pass, without decoding a message. The index
lives in the top-level bucket "search", one bucket per session, and its
version in the meta bucket.

The index changes in the same transaction as the data: Append indexes
the message it adds, ReplaceLog reindexes the cycle it rewrites,
AddRecord indexes the texts of a record of an indexed kind, and
DeleteSession drops the session. Each write indexes only what it adds,
never the session's history. Every indexed session carries a watermark,
the sequences of its log and indexed record lists; a session written by a
Store without rules (or by a Tally without the index) no longer matches
its watermark, MatchTexts reports it as not indexed, and
Store.EnsureSearchIndex indexes it again from its log. EnsureSearchIndex
also builds the whole index when there is none or it was built under
another SearchRules.Version or layout, and Store.RebuildSearchIndex
builds it from scratch; both commit in Updates of bounded size. A build
gives the same index, byte for byte, as the writes that kept it.

# Caveats

Values read from a transaction are copies and stay valid after it ends, and
values passed to write methods are copied, so callers may reuse their buffers.
The price is one allocation per value read; use Tx.LogRange to stream a large
log instead of loading it with Tx.Log.

A Tx is only valid inside the function it was passed to and must not be used
from another goroutine. Do not call Store.Update or Store.View, or the Store
shortcuts, from inside a transaction function: bbolt allows one writer at a
time, and a writer that must grow the file waits for open readers, so nested
transactions can deadlock.

Open refuses a file that is not a database it can read, returning ErrCorrupt,
and a file written by a newer Tally, returning ErrNewerFormat. In both cases
the file is left exactly as it was: storage never truncates, recreates or
repairs a database on its own. Damage found later, in a record or a page,
is reported as an error wrapping ErrCorrupt rather than a panic, and a write
transaction that found damage is not committed. Open also walks the page
tree once, through plain reads (in the background for files over
CheckBytes, with the first write waiting for it): a file damaged past its
header can still be read (to export what it holds), but every Update is
refused with Store.Damage, which says how to recover. A page on the
freelist is not checked: bbolt never reads one and overwrites it whole.

Durability is the durability of bbolt with fsync enabled: a committed Update
survives the process being killed and, as far as the operating system and the
disk honour fsync, a power failure. Each Update costs at least one fsync, so
callers that need to write many values should write them in one Update.
*/
package storage
