package storage

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// The search index: for each session, the lowercased text of every log
// message and of every text its records carry, as SearchRules extract
// them, each with a trigram signature. A query tests the signatures and
// verifies the texts that pass; it never decodes a message. See the
// package documentation for the layout and guarantees.

// SearchRules tell the search index what a stored value says: storage
// gives log messages and records no meaning of its own, so the engine
// passes its rules in Options.Search. A Store opened without rules keeps
// no index; a session it writes to is reindexed from its log by the next
// Store that has rules, before a query trusts it.
type SearchRules struct {
	// Version names the rules. An index built under another Version (or
	// another layout of this package) is dropped and built again before
	// it is used, so change it whenever the texts the rules return change.
	Version string
	// Message returns the text search looks in for the log message data,
	// or ok false to leave the message out. data is only valid during the
	// call.
	Message func(data []byte) (text string, ok bool)
	// Kinds are the record lists whose records carry texts of their own.
	Kinds []Kind
	// Record returns the texts a record of one of Kinds carries; blob
	// reads a blob stored with PutBlob, in the same transaction. data is
	// only valid during the call.
	Record func(kind Kind, data []byte, blob func(sha string) ([]byte, error)) []RecordText
}

// RecordText is one text a record adds to the search index.
type RecordText struct {
	// Cycle is the cycle the text belongs to, from 1; a text with
	// another cycle is left out.
	Cycle int
	Text  string
}

// TextMatch names one indexed text that contains every word of a
// TextQuery.
type TextMatch struct {
	Cycle int
	// Kind is the record list the text came from, or "" for a log
	// message.
	Kind Kind
	// Seq is the log message's sequence number, or the record's.
	Seq uint64
	// Position is a log message's position in its cycle's log, counting
	// from 0 every message appended or written by ReplaceLog (also those
	// the rules left out); for a record's text, its place among the texts
	// Record returned for that record.
	Position int
	// Text is the indexed text, lowercased with strings.ToLower.
	Text string
}

// TextQuery is a compiled query for MatchTexts: the texts that contain
// every one of its words. Make one with NewTextQuery.
type TextQuery struct {
	words  [][]byte
	hashes []uint32 // distinct trigram hashes of the words, unshifted
}

// NewTextQuery compiles words for MatchTexts. The words are matched as
// given, as substrings of the lowercased text (strings.ToLower), so pass
// them lowercased; a query without words matches every text.
func NewTextQuery(words []string) TextQuery {
	var q TextQuery
	for _, w := range words {
		q.words = append(q.words, []byte(w))
		if len(w) == 2 {
			q.add(bigramHash(w[0], w[1]))
		}
		for i := 0; i+2 < len(w); i++ {
			q.add(trigramHash(w[i], w[i+1], w[i+2]))
		}
	}
	return q
}

func (q *TextQuery) add(h uint32) {
	if !slices.Contains(q.hashes, h) {
		q.hashes = append(q.hashes, h)
	}
}

// Index layout:
//
//	meta/search                searchLayout (4 bytes) + SearchRules.Version
//	search/<session ID>/       one bucket per indexed session:
//	  d <doc>                  position (4) + log2 of signature bits (1)
//	                           + signature: one bit set for each distinct
//	                           trigram and bigram of the text's bytes
//	  t <doc>                  the lowercased text
//	  w                        the watermark: the sequences of the
//	                           session's log and of each of Kinds when
//	                           it was last indexed
//
// <doc> is cycle (4) + class (1: the index of a Kind in kinds, or
// classLog) + sequence (8) + part (4), so a session's texts sort by
// cycle, then records before the log, then sequence. An append adds at
// the end of the d and t ranges and changes w next to the end, so
// a commit writes a few pages of the index whatever the history.
var (
	bucketSearch     = []byte("search")
	keySearchVersion = []byte("search") // in bucketMeta
	keySearchMark    = []byte("w")
)

const (
	// searchLayout is the layout's version: 2 since a message's position
	// comes from the log's kept length (the per-cycle counts of layout 1
	// are gone); an index of another layout is built anew.
	searchLayout = 2
	docLen       = 17
	classLog     = 0xFF
	prefixDoc    = 'd'
	prefixText   = 't'
	// Signatures have from 2^minSigBits to 2^maxSigBits bits, the
	// smallest power of two at least twice the text's length: the
	// distinct trigrams and bigrams of prose set about a third of the
	// bits.
	minSigBits = 6
	maxSigBits = 16
)

// searchRules are the rules a Store was opened with, checked.
type searchRules struct {
	SearchRules
	version []byte // the value of keySearchVersion they write
}

func newSearchRules(r *SearchRules) (*searchRules, error) {
	if r == nil {
		return nil, nil
	}
	for _, k := range r.Kinds {
		if err := checkKind("Options.Search", k); err != nil {
			return nil, err
		}
	}
	rules := &searchRules{SearchRules: *r}
	rules.Kinds = slices.Clone(r.Kinds)
	rules.version = binary.BigEndian.AppendUint32(nil, searchLayout)
	rules.version = append(rules.version, r.Version...)
	return rules, nil
}

// message runs Message, leaving out a message it panics on.
func (r *searchRules) message(data []byte) (text string, ok bool) {
	if r.Message == nil {
		return "", false
	}
	defer func() {
		if recover() != nil {
			text, ok = "", false
		}
	}()
	return r.Message(data)
}

// record runs Record, leaving out a record it panics on.
func (r *searchRules) record(kind Kind, data []byte, blob func(string) ([]byte, error)) (texts []RecordText) {
	if r.Record == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			texts = nil
		}
	}()
	return r.Record(kind, data, blob)
}

func (r *searchRules) indexes(kind Kind) bool { return r != nil && slices.Contains(r.Kinds, kind) }

func trigramHash(a, b, c byte) uint32 {
	return (uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * 0x9E3779B1
}

func bigramHash(a, b byte) uint32 {
	return (uint32(a)<<8 | uint32(b) | 1<<24) * 0x85EBCA77
}

// sigBits is the log2 of the signature size for a text of n bytes.
func sigBits(n int) byte {
	b := byte(minSigBits)
	for b < maxSigBits && 1<<b < 2*n {
		b++
	}
	return b
}

// signature sets, for each trigram and bigram of low, one bit of a
// signature of 2^bits bits.
func signature(low []byte, bits byte) []byte {
	sig := make([]byte, 1<<bits/8)
	shift := 32 - bits
	for i := 0; i+1 < len(low); i++ {
		h := bigramHash(low[i], low[i+1]) >> shift
		sig[h>>3] |= 1 << (h & 7)
		if i+2 < len(low) {
			h = trigramHash(low[i], low[i+1], low[i+2]) >> shift
			sig[h>>3] |= 1 << (h & 7)
		}
	}
	return sig
}

// mayMatch reports whether a text with signature sig may contain every
// word: false means it cannot.
func (q *TextQuery) mayMatch(bits byte, sig []byte) bool {
	shift := 32 - bits
	for _, h := range q.hashes {
		h >>= shift
		if sig[h>>3]&(1<<(h&7)) == 0 {
			return false
		}
	}
	return true
}

func (q *TextQuery) matches(low []byte) bool {
	for _, w := range q.words {
		if !bytes.Contains(low, w) {
			return false
		}
	}
	return true
}

func docKey(prefix byte, cycle uint32, class byte, seq uint64, part uint32) []byte {
	k := make([]byte, 1+docLen)
	k[0] = prefix
	binary.BigEndian.PutUint32(k[1:], cycle)
	k[5] = class
	binary.BigEndian.PutUint64(k[6:], seq)
	binary.BigEndian.PutUint32(k[14:], part)
	return k
}

// watermark is the state of the session's history the index follows:
// the sequences of its log and of the record lists the rules index.
// Every write that changes what the index holds moves it.
func (tx *Tx) watermark(session string) []byte {
	key := []byte(session)
	seq := func(b *bolt.Bucket) uint64 {
		if b == nil {
			return 0
		}
		return b.Sequence()
	}
	w := binary.BigEndian.AppendUint64(nil, seq(tx.nested(bucketLog, key)))
	for _, k := range tx.rules.Kinds {
		w = binary.BigEndian.AppendUint64(w, seq(tx.nested([]byte(k), key)))
	}
	return w
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// searchSessions returns the bucket of indexed sessions when the index
// was built under tx's rules, or nil.
func (tx *Tx) searchSessions() *bolt.Bucket {
	if tx.rules == nil {
		return nil
	}
	if tx.trusted {
		return tx.btx.Bucket(bucketSearch)
	}
	mb := tx.btx.Bucket(bucketMeta)
	if mb == nil || !bytes.Equal(mb.Get(keySearchVersion), tx.rules.version) {
		return nil
	}
	return tx.btx.Bucket(bucketSearch)
}

// MatchTexts returns, in the order of their keys (by cycle, then the
// texts of records before the cycle's log messages, then sequence), the
// session's indexed texts that contain every word of q. indexed is false,
// with no matches, when the index does not follow the session as it is
// now: the Store has no SearchRules, the index was never built or was
// built under other rules, or a Store without rules wrote to the session
// since; EnsureSearchIndex brings it up to date. Once EnsureSearchIndex
// has succeeded on the Store, the session's watermark is no longer
// compared: only the Store can write to the file then, and its writes
// keep the index. A session without any message or record is indexed and
// matches nothing.
func (tx *Tx) MatchTexts(session string, q TextQuery) (matches []TextMatch, indexed bool, err error) {
	const op = "MatchTexts"
	if err := tx.begin(op, false); err != nil {
		return nil, false, err
	}
	defer tx.end(op, false, &err)
	if err := checkKey(op, "session ID", session); err != nil {
		return nil, false, err
	}
	ss := tx.searchSessions()
	if ss == nil {
		return nil, false, nil
	}
	b := ss.Bucket([]byte(session))
	switch {
	case b == nil:
		return nil, tx.trusted || isZero(tx.watermark(session)), nil
	case !tx.trusted && !bytes.Equal(b.Get(keySearchMark), tx.watermark(session)):
		return nil, false, nil
	}
	damaged := func(k []byte) error {
		return tx.corrupt("search index of session "+strconv.Quote(session), errMalformedKey(k))
	}
	c := b.Cursor()
	for k, v := c.Seek([]byte{prefixDoc}); len(k) > 0 && k[0] == prefixDoc; k, v = c.Next() {
		if len(k) != 1+docLen || len(v) < 5 || v[4] < minSigBits || v[4] > maxSigBits || len(v) != 5+1<<v[4]/8 {
			return nil, false, damaged(k)
		}
		if !q.mayMatch(v[4], v[5:]) {
			continue
		}
		tk := slices.Clone(k)
		tk[0] = prefixText
		low, ok := get(b, tk)
		if !ok {
			return nil, false, damaged(tk)
		}
		if q.matches(low) {
			m := decodeMatch(k[1:], v)
			m.Text = string(low)
			matches = append(matches, m)
		}
	}
	return matches, true, nil
}

func decodeMatch(doc, v []byte) TextMatch {
	m := TextMatch{Cycle: int(binary.BigEndian.Uint32(doc)), Seq: binary.BigEndian.Uint64(doc[5:])}
	if class := doc[4]; class == classLog {
		m.Position = int(binary.BigEndian.Uint32(v))
	} else {
		if int(class) < len(kinds) {
			m.Kind = kinds[class]
		}
		m.Position = int(binary.BigEndian.Uint32(doc[13:]))
	}
	return m
}

func clampU32(n int) uint32 {
	return uint32(min(max(n, 0), math.MaxUint32))
}
