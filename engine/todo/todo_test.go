package todo

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// inProgressCount counts the items in progress.
func inProgressCount(items []Item) int {
	n := 0
	for _, it := range items {
		if it.Status == InProgress {
			n++
		}
	}
	return n
}

// statuses renders items as "id:status" pairs for compact comparison.
func statuses(items []Item) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = it.ID + ":" + string(it.Status)
	}
	return strings.Join(parts, " ")
}

func TestWriteKeepsOnlyLastInProgress(t *testing.T) {
	cases := []struct {
		name  string
		items []Item
		want  string
	}{
		{"no item in progress",
			[]Item{{Content: "a"}, {Content: "b", Status: Completed}},
			"1:pending 2:completed"},
		{"one item in progress is kept",
			[]Item{{Content: "a", Status: InProgress}, {Content: "b"}},
			"1:in_progress 2:pending"},
		{"two in progress keeps the last",
			[]Item{{Content: "a", Status: InProgress}, {Content: "b", Status: InProgress}},
			"1:pending 2:in_progress"},
		{"three in progress keeps the last",
			[]Item{{Content: "a", Status: InProgress}, {Content: "b", Status: Completed}, {Content: "c", Status: InProgress}, {Content: "d", Status: InProgress}},
			"1:pending 2:completed 3:pending 4:in_progress"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := New()
			if err := l.Write(tc.items); err != nil {
				t.Fatal(err)
			}
			if got := statuses(l.Items()); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestAddAndUpdateKeepSingleInProgress(t *testing.T) {
	l := New()
	if err := l.Write([]Item{{Content: "a", Status: InProgress}, {Content: "b"}, {Content: "c"}}); err != nil {
		t.Fatal(err)
	}
	t.Run("add in progress while another is demotes the other", func(t *testing.T) {
		it, err := l.Add("d", InProgress)
		if err != nil {
			t.Fatal(err)
		}
		if it.ID != "4" || it.Status != InProgress {
			t.Fatalf("added %+v", it)
		}
		if got, want := statuses(l.Items()), "1:pending 2:pending 3:pending 4:in_progress"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("update to in progress demotes the current one", func(t *testing.T) {
		if _, err := l.Update("2", InProgress, ""); err != nil {
			t.Fatal(err)
		}
		if got, want := statuses(l.Items()), "1:pending 2:in_progress 3:pending 4:pending"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("update of the in-progress item to in progress keeps it", func(t *testing.T) {
		if _, err := l.Update("2", InProgress, ""); err != nil {
			t.Fatal(err)
		}
		if got := inProgressCount(l.Items()); got != 1 {
			t.Errorf("%d items in progress", got)
		}
	})
	t.Run("completing the in-progress item leaves none in progress", func(t *testing.T) {
		if _, err := l.Update("2", Completed, ""); err != nil {
			t.Fatal(err)
		}
		if _, ok := l.InProgress(); ok {
			t.Error("an item is still in progress")
		}
	})
	t.Run("add pending leaves the in-progress item alone", func(t *testing.T) {
		if _, err := l.Update("3", InProgress, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Add("e", ""); err != nil {
			t.Fatal(err)
		}
		cur, ok := l.InProgress()
		if !ok || cur.ID != "3" {
			t.Errorf("in progress = %+v, %v; want #3", cur, ok)
		}
	})
}

func TestIDs(t *testing.T) {
	cases := []struct {
		name  string
		items []Item
		add   string // ID the next Add must get
		want  string
	}{
		{"missing ids are numbered in order", []Item{{Content: "a"}, {Content: "b"}, {Content: "c"}}, "4", "1 2 3"},
		{"given ids are kept", []Item{{ID: "x", Content: "a"}, {ID: "y", Content: "b"}}, "1", "x y"},
		{"missing ids follow the highest numeric id", []Item{{Content: "a"}, {ID: "7", Content: "b"}, {Content: "c"}}, "10", "8 7 9"},
		{"ids are trimmed", []Item{{ID: " 2 ", Content: "a"}}, "3", "2"},
		{"empty list", nil, "1", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := New()
			if err := l.Write(tc.items); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, it := range l.Items() {
				ids = append(ids, it.ID)
			}
			if got := strings.Join(ids, " "); got != tc.want {
				t.Errorf("ids %q, want %q", got, tc.want)
			}
			it, err := l.Add("next", "")
			if err != nil {
				t.Fatal(err)
			}
			if it.ID != tc.add {
				t.Errorf("added id %q, want %q", it.ID, tc.add)
			}
		})
	}
}

func TestBadInputIsRejected(t *testing.T) {
	seed := []Item{{Content: "Read the code", Status: Completed}, {Content: "Fix it", Status: InProgress}, {Content: "Run the tests"}}
	cases := []struct {
		name string
		op   func(l *List) error
		want string
	}{
		{"write with a bad status", func(l *List) error {
			return l.Write([]Item{{Content: "Ship", Status: "done"}})
		}, `invalid status "done" for item "Ship"; use pending, in_progress or completed`},
		{"write with empty content", func(l *List) error {
			return l.Write([]Item{{Content: "a"}, {Content: "  "}})
		}, "item 2 has empty content"},
		{"write with duplicate ids", func(l *List) error {
			return l.Write([]Item{{ID: "a", Content: "x"}, {ID: "b", Content: "y"}, {ID: "a", Content: "z"}})
		}, `duplicate id "a" on items 1 and 3`},
		{"add with empty content", func(l *List) error {
			_, err := l.Add(" ", Pending)
			return err
		}, "content is empty"},
		{"add with a bad status", func(l *List) error {
			_, err := l.Add("Deploy", "started")
			return err
		}, `invalid status "started" for item "Deploy"`},
		{"update of an unknown id", func(l *List) error {
			_, err := l.Update("9", Completed, "")
			return err
		}, `no item has id "9"; valid ids are 1, 2, 3`},
		{"update without an id", func(l *List) error {
			_, err := l.Update("", Completed, "")
			return err
		}, "id is missing"},
		{"update with a bad status", func(l *List) error {
			_, err := l.Update("2", "in-progress", "")
			return err
		}, `invalid status "in-progress" for item "2"`},
		{"update with nothing to change", func(l *List) error {
			_, err := l.Update("2", "", "")
			return err
		}, `nothing to change for item "2"`},
		{"update with blank content", func(l *List) error {
			_, err := l.Update("2", Completed, "   ")
			return err
		}, `new content for item "2" is blank`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := New()
			if err := l.Write(seed); err != nil {
				t.Fatal(err)
			}
			before, version := statuses(l.Items()), l.Version()
			err := tc.op(l)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if after := statuses(l.Items()); after != before || l.Version() != version {
				t.Errorf("failed call changed the list: %s (v%d) -> %s (v%d)", before, version, after, l.Version())
			}
		})
	}
	t.Run("update of an empty list says how to add items", func(t *testing.T) {
		_, err := New().Update("1", Completed, "")
		if err == nil || !strings.Contains(err.Error(), "checklist is empty") {
			t.Fatalf("error %v", err)
		}
	})
}

func TestUpdateChangesOnlyWhatIsGiven(t *testing.T) {
	l := New()
	if err := l.Write([]Item{{Content: "a", Status: Completed}}); err != nil {
		t.Fatal(err)
	}
	it, err := l.Update("1", "", "  renamed  ")
	if err != nil {
		t.Fatal(err)
	}
	if it != (Item{ID: "1", Content: "renamed", Status: Completed}) {
		t.Errorf("content-only update gave %+v", it)
	}
	it, err = l.Update("1", Pending, "")
	if err != nil {
		t.Fatal(err)
	}
	if it != (Item{ID: "1", Content: "renamed", Status: Pending}) {
		t.Errorf("status-only update gave %+v", it)
	}
}

func TestVersionAndViews(t *testing.T) {
	l := New()
	if l.Version() != 0 {
		t.Fatalf("new list at version %d", l.Version())
	}
	_ = l.Write([]Item{{Content: "a", Status: Completed}, {Content: "b", Status: InProgress}, {Content: "c"}})
	_, _ = l.Add("d", "")
	_, _ = l.Update("4", Completed, "")
	_, _ = l.Update("99", Completed, "") // fails
	if l.Version() != 3 {
		t.Errorf("version %d after three changes and one failure, want 3", l.Version())
	}
	if got := statuses(l.Open()); got != "2:in_progress 3:pending" {
		t.Errorf("open items %s", got)
	}
	items := l.Items()
	items[0].Content = "changed"
	if l.Items()[0].Content != "a" {
		t.Error("Items returned the list's own storage")
	}
	if New().Items() == nil || New().Open() == nil {
		t.Error("empty list returned nil slices")
	}
}

func TestSnapshot(t *testing.T) {
	cases := []struct {
		name     string
		items    []Item
		summary  string
		json     string
		pct      int
		progress string
	}{
		{"empty list is 0 percent", nil,
			"checklist: 0 items, 0 done (0%), nothing in progress",
			`{"items":[],"completion_pct":0,"in_progress_id":null}`, 0, ""},
		{"one item", []Item{{Content: "Only", Status: Completed}},
			"checklist: 1 item, 1 done (100%), nothing in progress",
			`{"items":[{"id":"1","content":"Only","status":"completed"}],"completion_pct":100,"in_progress_id":null}`, 100, ""},
		{"five items with one in progress",
			[]Item{{Content: "a", Status: Completed}, {Content: "b", Status: Completed}, {Content: "Run the tests", Status: InProgress}, {Content: "d"}, {Content: "e"}},
			`checklist: 5 items, 2 done (40%), in progress: #3 "Run the tests"`,
			`{"items":[{"id":"1","content":"a","status":"completed"},{"id":"2","content":"b","status":"completed"},{"id":"3","content":"Run the tests","status":"in_progress"},{"id":"4","content":"d","status":"pending"},{"id":"5","content":"e","status":"pending"}],"completion_pct":40,"in_progress_id":"3"}`,
			40, "3"},
		{"percent rounds down", []Item{{Content: "a", Status: Completed}, {Content: "b"}, {Content: "c"}},
			"checklist: 3 items, 1 done (33%), nothing in progress", "", 33, ""},
		{"content with quotes and newlines stays on one line", []Item{{Content: "say \"hi\"\nthen <go>", Status: InProgress}},
			`checklist: 1 item, 0 done (0%), in progress: #1 "say \"hi\"\nthen <go>"`,
			`{"items":[{"id":"1","content":"say \"hi\"\nthen <go>","status":"in_progress"}],"completion_pct":0,"in_progress_id":"1"}`, 0, "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := New()
			if err := l.Write(tc.items); err != nil {
				t.Fatal(err)
			}
			s := l.Snapshot()
			if s.Summary != tc.summary {
				t.Errorf("summary\n got %s\nwant %s", s.Summary, tc.summary)
			}
			if tc.json != "" && s.JSON() != tc.json {
				t.Errorf("json\n got %s\nwant %s", s.JSON(), tc.json)
			}
			if s.CompletionPct != tc.pct || s.InProgressID != tc.progress {
				t.Errorf("pct %d, in progress %q; want %d, %q", s.CompletionPct, s.InProgressID, tc.pct, tc.progress)
			}
			if strings.Contains(s.Summary, "\n") {
				t.Error("summary spans several lines")
			}
			if s.String() != s.Summary+"\n\n"+s.JSON() {
				t.Errorf("String() = %q", s.String())
			}
			if s.JSON() != l.Snapshot().JSON() {
				t.Error("JSON is not deterministic")
			}
		})
	}
	t.Run("long in-progress content is clipped in the summary", func(t *testing.T) {
		l := New()
		_, _ = l.Add(strings.Repeat("x", 500), InProgress)
		s := l.Snapshot()
		if len(s.Summary) > 200 || !strings.Contains(s.Summary, "…") {
			t.Errorf("summary %q", s.Summary)
		}
		if !strings.Contains(s.JSON(), strings.Repeat("x", 500)) {
			t.Error("JSON lost the full content")
		}
	})
}

func TestPersistence(t *testing.T) {
	t.Run("round trip keeps items and version", func(t *testing.T) {
		l := New()
		_ = l.Write([]Item{{ID: "a", Content: "one", Status: Completed}, {Content: "two", Status: InProgress}})
		_, _ = l.Add("three", "")
		data, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		if statuses(got.Items()) != statuses(l.Items()) || got.Snapshot().String() != l.Snapshot().String() {
			t.Errorf("round trip changed the list:\n%s\n%s", l.Snapshot(), got.Snapshot())
		}
		if got.Version() != l.Version() {
			t.Errorf("version %d, want %d", got.Version(), l.Version())
		}
	})
	t.Run("corrupt stored list with several in progress is repaired", func(t *testing.T) {
		data := `{"version":4,"items":[{"id":"1","content":"a","status":"in_progress"},{"id":"2","content":"b","status":"in_progress"},{"id":"3","content":"c","status":"in_progress"},{"id":"4","content":"d","status":"completed"}]}`
		l, err := Decode([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := statuses(l.Items()), "1:pending 2:pending 3:in_progress 4:completed"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("unmarshal into a list in a struct", func(t *testing.T) {
		var session struct {
			Todo *List `json:"todo"`
		}
		if err := json.Unmarshal([]byte(`{"todo":{"items":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}}`), &session); err != nil {
			t.Fatal(err)
		}
		if got, want := statuses(session.Todo.Items()), "1:pending 2:in_progress"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
		if session.Todo.Version() != 1 {
			t.Errorf("version %d after decoding into an empty list, want 1", session.Todo.Version())
		}
	})
	t.Run("snapshot JSON decodes too", func(t *testing.T) {
		l := New()
		_ = l.Write([]Item{{Content: "a", Status: InProgress}})
		got, err := Decode([]byte(l.Snapshot().JSON()))
		if err != nil {
			t.Fatal(err)
		}
		if statuses(got.Items()) != "1:in_progress" {
			t.Errorf("got %s", statuses(got.Items()))
		}
	})
	bad := []struct{ name, data, want string }{
		{"malformed stored JSON", `{"items":[`, "not valid JSON"},
		{"stored bad status", `{"items":[{"id":"1","content":"a","status":"done"}]}`, `invalid status "done"`},
		{"stored duplicate ids", `{"items":[{"id":"1","content":"a"},{"id":"1","content":"b"}]}`, `duplicate id "1"`},
	}
	for _, tc := range bad {
		t.Run(tc.name+" is an error", func(t *testing.T) {
			l := New()
			_ = l.Write([]Item{{Content: "keep"}})
			err := l.UnmarshalJSON([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if statuses(l.Items()) != "1:pending" {
				t.Error("failed decode changed the list")
			}
		})
	}
}

func TestConcurrentUse(t *testing.T) {
	l := New()
	tools := Tools(l)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				switch i % 5 {
				case 0:
					_, _ = l.Add(fmt.Sprintf("g%d-%d", g, i), InProgress)
				case 1:
					_, _ = l.Update(fmt.Sprint(i), InProgress, "")
				case 2:
					_ = l.Snapshot().String()
					_, _ = l.InProgress()
				case 3:
					_ = run(t, tools[g%len(tools)], `{}`)
				case 4:
					if _, err := json.Marshal(l); err != nil {
						t.Error(err)
					}
				}
				if n := inProgressCount(l.Items()); n > 1 {
					t.Errorf("%d items in progress", n)
				}
			}
		}()
	}
	wg.Wait()
}
