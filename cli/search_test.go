package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/storage"
)

// searchData writes two sessions into a new data directory: a's cycle 1
// was compacted (its first answer superseded), b's title matches.
func searchData(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	st, err := storage.Open(filepath.Join(data, "tally.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	encode := func(m transcript.Message) []byte {
		b, err := transcript.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	err = st.Update(func(tx *storage.Tx) error {
		for i, s := range []storage.Session{{ID: "a", Title: "Multiplying", Cycle: 1}, {ID: "b", Title: "Overflow notes\tand more", Cycle: 2}} {
			s.Created, s.Updated = at, at.Add(time.Duration(i)*time.Hour)
			if err := tx.PutSession(s); err != nil {
				return err
			}
		}
		gone, _ := json.Marshal([]transcript.Superseded{{Index: 0, Message: transcript.AssistantReply("Mul uses int8\toverflow math", "", nil, at)}})
		sha, err := tx.PutBlob(gone)
		if err != nil {
			return err
		}
		if err := tx.ReplaceLog("a", 1, [][]byte{encode(transcript.UserText("<turn_meta>\ndate: 2026-01-02\nmodel: m\nworking_set: calc/mul.go\n</turn_meta>", "Why does Mul overflow?", at))}); err != nil {
			return err
		}
		rec, _ := json.Marshal(transcript.RebuildRecord{Reason: "compaction", Time: at, Cycle: 1, Superseded: sha})
		if _, err := tx.AddRecord(storage.KindRebuild, "a", rec); err != nil {
			return err
		}
		if _, err := tx.Append("b", 1, encode(transcript.UserText("", "an old cycle about mul overflow", at))); err != nil {
			return err
		}
		_, err = tx.Append("b", 2, encode(transcript.UserText("", "unrelated \x1b[31mred", at)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// tally search prints the app's hits, one a line, or one JSON object a
// line, the same hits Workbench.Search gives, snippets included: a
// message's engine blocks (its <turn_meta> header here) are left out of
// them, as the app does.
func TestSearchCommandPrintsTheAppsHits(t *testing.T) {
	data := searchData(t)
	stdout, stderr, code := runCLI(t, "search", "--data", data, "mul", "OVERFLOW")
	want := "b\tcycle 1\tmessage 0 (archived)\tan old cycle about mul overflow\n" +
		"a\tcycle 1\tmessage 0 (superseded)\tMul uses int8 overflow math\n" +
		"a\tcycle 1\tmessage 0\tWhy does Mul overflow?\n"
	if code != ExitOK || stdout != want || stderr != "" {
		t.Errorf("tally search: exit %d, stdout\n%s\nstderr %q; want\n%s", code, stdout, stderr, want)
	}
	if stdout, _, _ := runCLI(t, "search", "--data", data, "overflow", "notes"); stdout != "b\ttitle\t-\tOverflow notes and more\n" {
		t.Errorf("a title hit: %q", stdout)
	}
	if stdout, _, _ := runCLI(t, "search", "--data", data, "red"); strings.Contains(stdout, "\x1b") || !strings.Contains(stdout, `\u001b[31mred`) {
		t.Errorf("an escape sequence reached the terminal: %q", stdout)
	}

	stdout, _, code = runCLI(t, "search", "mul overflow", "--json", "--data", data)
	w, _, err := workbench.Open(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	hits, _, err := w.Search("mul overflow")
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, h := range hits {
		b, _ := json.Marshal(h)
		lines = append(lines, string(b))
	}
	if code != ExitOK || stdout != strings.Join(lines, "\n")+"\n" {
		t.Errorf("tally search --json: exit %d\n%s\nwant the app's hits\n%s", code, stdout, strings.Join(lines, "\n"))
	}
	var first workbench.SearchHit
	if err := json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &first); err != nil || first.Session != "b" || first.Cycle != 1 || first.Message.Role != transcript.User {
		t.Errorf("the first JSON line: %+v, %v", first, err)
	}
}

func TestSearchCommandReindexesAndRefusesAnEmptyQuery(t *testing.T) {
	data := searchData(t)
	if _, stderr, code := runCLI(t, "search", "--data", data); code != ExitUsage || !strings.Contains(stderr, "give the words") {
		t.Errorf("no query: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runCLI(t, "search", "--reindex=yes", "--data", data, "x"); code != ExitUsage {
		t.Errorf("--reindex=yes: exit %d, %q", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "search", "--reindex", "--data", data)
	if code != ExitOK || stdout != "" || !strings.Contains(stderr, "rebuilt") {
		t.Errorf("tally search --reindex: exit %d, %q, %q", code, stdout, stderr)
	}
	stdout, _, code = runCLI(t, "search", "--data", data, "--reindex", "int8")
	if code != ExitOK || stdout != "a\tcycle 1\tmessage 0 (superseded)\tMul uses int8 overflow math\n" {
		t.Errorf("tally search --reindex int8: exit %d, %q", code, stdout)
	}
	if !reads([]string{"search", "x"}) || reads([]string{"search", "--reindex", "x"}) {
		t.Error("a search reads and may run inside the app; a rebuild of the index does not")
	}
}

// More hits than workbench.MaxSearchHits: the first ones, and a note.
func TestSearchCommandSaysWhenHitsWereLeftOut(t *testing.T) {
	data := t.TempDir()
	st, err := storage.Open(filepath.Join(data, "tally.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	err = st.Update(func(tx *storage.Tx) error {
		if err := tx.PutSession(storage.Session{ID: "s", Created: now, Updated: now, Cycle: 1}); err != nil {
			return err
		}
		for i := range workbench.MaxSearchHits + 5 {
			b, _ := transcript.Encode(transcript.UserText("", fmt.Sprintf("question %d", i), now))
			if _, err := tx.Append("s", 1, b); err != nil {
				return err
			}
		}
		return nil
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "search", "--data", data, "question")
	if code != ExitOK || strings.Count(stdout, "\n") != workbench.MaxSearchHits || !strings.Contains(stderr, "only the first 200 hits") {
		t.Errorf("exit %d, %d lines, stderr %q", code, strings.Count(stdout, "\n"), stderr)
	}
	if !strings.HasSuffix(stdout, "s\tcycle 1\tmessage 199\tquestion 199\n") {
		t.Errorf("the last line: %q", stdout[strings.LastIndex(stdout[:len(stdout)-1], "\n")+1:])
	}
}
