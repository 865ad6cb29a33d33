package workbench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// referenceSearch is Search as it was before the search index: it decodes
// and lowercases every message of every session on every query. The
// index must give exactly its hits. It is the fallback scan (scanHits)
// run over every session.
func referenceSearch(w *Workbench, query string) (hits []SearchHit, truncated bool, err error) {
	words := strings.Fields(strings.ToLower(query))
	if len(words) == 0 {
		return nil, false, nil
	}
	list, err := w.store.Sessions()
	if err != nil {
		return nil, false, err
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Updated.After(list[j].Updated) })
	for _, s := range list {
		add := func(h SearchHit) bool {
			if len(hits) >= MaxSearchHits {
				truncated = true
				return false
			}
			hits = append(hits, h)
			return true
		}
		if matchAll(strings.ToLower(s.Title), words) && !add(SearchHit{Session: s.ID, Title: s.Title, Snippet: s.Title}) {
			break
		}
		if !w.scanHits(s, words, add) { // the scan the index replaced, over every session
			break
		}
		if truncated {
			break
		}
	}
	return hits, truncated, nil
}

// corpusVocabulary is what the generated messages are made of: prose and
// code words, a few with capitals and accents, weighted towards the first.
var corpusVocabulary = strings.Fields(`the a to of and is in it that for you this with
	on be not are as if can we run test file func return error nil err go build
	package import string int value type struct the test fails because Mul
	overflow int8 math retry budget handler request response context cancel
	deadline cache token prefix window compaction cycle session archive
	summary tool call result grep read_file edit_file write patch diff line
	column path config settings model provider endpoint latency stream chunk
	Überprüfung café naïve 日本語 テスト очередь ошибка fix bug issue panic
	goroutine channel mutex lock unlock select defer slice map append len cap
	json marshal unmarshal decode encode bytes buffer reader writer io os exec
	command shell bash make lint vet staticcheck gofmt coverage benchmark ns/op`)

// corpusRare are words that occur in few messages: about one message in
// 150 has one of them.
var corpusRare = []string{"quokka", "zephyrine", "Blitzkrieg-Mode", "mul_overflow_guard"}

// corpusText returns about n bytes of text.
func corpusText(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteString([]string{" ", " ", " ", "\n", ", ", ". "}[r.IntN(6)])
		}
		switch i := r.IntN(20000); {
		case i < 1:
			b.WriteString(corpusRare[r.IntN(len(corpusRare))])
		case i < 1200:
			fmt.Fprintf(&b, "%s%d", corpusVocabulary[r.IntN(len(corpusVocabulary))], r.IntN(10000))
		default:
			// A skewed pick: the first words are the common ones.
			k := int(float64(len(corpusVocabulary)) * r.Float64() * r.Float64())
			b.WriteString(corpusVocabulary[k])
		}
	}
	return b.String()
}

// corpusMessage is a message of about n bytes: a prompt, an answer, a
// tool call or a tool result.
func corpusMessage(r *rand.Rand, n int, at time.Time) transcript.Message {
	switch r.IntN(4) {
	case 0:
		return transcript.UserText("", corpusText(r, n), at)
	case 1:
		return transcript.AssistantReply(corpusText(r, n), corpusText(r, r.IntN(200)), nil, at)
	case 2:
		args, _ := json.Marshal(map[string]string{"pattern": corpusText(r, 20), "path": corpusText(r, 10)})
		call := transcript.ToolCall{ID: fmt.Sprintf("c%d", r.IntN(1e6)), Name: []string{"grep", "read_file", "edit_file"}[r.IntN(3)], Arguments: string(args)}
		return transcript.AssistantReply(corpusText(r, n/4), "", []transcript.ToolCall{call}, at)
	}
	call := transcript.ToolCall{ID: "c1", Name: "grep"}
	return transcript.ToolResult(call, corpusText(r, n), r.IntN(10) == 0, at)
}

// corpusSession stores a session of messages messages of min to max
// bytes, over one to three cycles, with now and then a compaction that
// rewrites a cycle's log and keeps the messages it replaced, the way
// agent.Session.rebuild does, all in one Update.
func corpusSession(st *storage.Store, r *rand.Rand, id string, messages, minBytes, maxBytes int, at time.Time) error {
	cycles := 1 + r.IntN(3)
	sess := storage.Session{ID: id, Title: corpusText(r, 10+r.IntN(30)), Created: at, Updated: at, Cycle: cycles}
	return st.Update(func(tx *storage.Tx) error {
		if err := tx.PutSession(sess); err != nil {
			return err
		}
		for i := range messages {
			cycle := 1 + i*cycles/messages
			m := corpusMessage(r, minBytes+r.IntN(maxBytes-minBytes+1), at)
			data, err := transcript.Encode(m)
			if err != nil {
				return err
			}
			if _, err := tx.Append(id, cycle, data); err != nil {
				return err
			}
			if r.IntN(25) == 0 {
				if err := corpusCompact(tx, r, id, cycle, at); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// corpusCompact replaces the cycle's log with a summary and its last
// message, keeping the others as superseded messages.
func corpusCompact(tx *storage.Tx, r *rand.Rand, id string, cycle int, at time.Time) error {
	recs, err := tx.Log(id, cycle)
	if err != nil || len(recs) < 2 {
		return err
	}
	var gone []transcript.Superseded
	for i, rec := range recs[:len(recs)-1] {
		m, err := transcript.Decode(rec.Data)
		if err != nil {
			return err
		}
		gone = append(gone, transcript.Superseded{Index: i, Message: m})
	}
	summary, err := transcript.Encode(transcript.UserText("", "summary: "+corpusText(r, 200), at))
	if err != nil {
		return err
	}
	blob, err := json.Marshal(gone)
	if err != nil {
		return err
	}
	sha, err := tx.PutBlob(blob)
	if err != nil {
		return err
	}
	if err := tx.ReplaceLog(id, cycle, [][]byte{summary, recs[len(recs)-1].Data}); err != nil {
		return err
	}
	reason := []string{"compaction", "purge", ""}[r.IntN(3)]
	rec, err := json.Marshal(transcript.RebuildRecord{Reason: reason, Time: at, Cycle: cycle, Superseded: sha, SupersededCount: len(gone)})
	if err != nil {
		return err
	}
	_, err = tx.AddRecord(storage.KindRebuild, id, rec)
	return err
}

// corpusQuery is a query of one to three words of the corpus, sometimes
// cut, in any case.
func corpusQuery(r *rand.Rand) string {
	var words []string
	for range 1 + r.IntN(3) {
		var w string
		switch i := r.IntN(10); {
		case i < 2:
			w = corpusRare[r.IntN(len(corpusRare))]
		case i < 3:
			w = "zzqx" // nowhere
		default:
			w = corpusVocabulary[r.IntN(len(corpusVocabulary))]
		}
		if len(w) > 3 && r.IntN(3) == 0 {
			w = w[r.IntN(2):] // part of a word, maybe half a rune
		}
		if r.IntN(2) == 0 {
			w = strings.ToUpper(w)
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// sameHits fails the test when the index's hits differ from the scan's.
func sameHits(t testing.TB, what, query string, got, want []SearchHit, gotTrunc, wantTrunc bool) {
	t.Helper()
	if gotTrunc != wantTrunc || len(got) != len(want) {
		t.Fatalf("%s, query %q: %d hits (truncated %v), the scan %d (truncated %v)", what, query, len(got), gotTrunc, len(want), wantTrunc)
	}
	for i := range got {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(want[i])
		if string(g) != string(w) {
			t.Fatalf("%s, query %q, hit %d:\nindex %s\nscan  %s", what, query, i, g, w)
		}
	}
}
