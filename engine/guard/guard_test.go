package guard

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestCanonical(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"empty string is no arguments", "", "{}"},
		{"blank string is no arguments", "  \n", "{}"},
		{"null is no arguments", "null", "{}"},
		{"keys are sorted", `{"b":2, "a":1}`, `{"a":1,"b":2}`},
		{"nested keys are sorted", `{"z":{"y":1,"x":[{"q":1,"p":2}]},"a":0}`, `{"a":0,"z":{"x":[{"p":2,"q":1}],"y":1}}`},
		{"arrays keep their order", `{"a":[3,1,2]}`, `{"a":[3,1,2]}`},
		{"insignificant whitespace is dropped", "{\n\t\"path\" : \"x y\" ,\r\n \"n\":1 }", `{"n":1,"path":"x y"}`},
		{"numbers are kept as written", `{"a":1.0,"b":1e2,"c":-0}`, `{"a":1.0,"b":1e2,"c":-0}`},
		{"unicode escapes are normalised", `{"p":"\u0061\u00e9"}`, `{"p":"aé"}`},
		{"escaped key is normalised", `{"\u0070ath":"x"}`, `{"path":"x"}`},
		{"html characters are not escaped", `{"c":"a<b && c>d"}`, `{"c":"a<b && c>d"}`},
		{"repeated key keeps the last value", `{"a":1,"a":2}`, `{"a":2}`},
		{"scalars are allowed", `"x"`, `"x"`},
		{"booleans and null", `{"t":true,"f":false,"n":null}`, `{"f":false,"n":null,"t":true}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonical(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	for _, bad := range []struct{ name, in string }{
		{"truncated object is invalid", `{"a":`},
		{"trailing text is invalid", `{"a":1} {"b":2}`},
		{"bare word is invalid", `hello`},
	} {
		t.Run(bad.name, func(t *testing.T) {
			if got, err := Canonical(bad.in); err == nil {
				t.Errorf("got %q and no error", got)
			}
		})
	}
}

func TestKey(t *testing.T) {
	cases := []struct {
		name      string
		tool1, a1 string
		tool2, a2 string
		wantSame  bool
	}{
		{"key order does not matter", "read_file", `{"a":1,"b":2}`, "read_file", `{"b":2, "a":1}`, true},
		{"different offset is not the same call", "read_file", `{"path":"x","offset":1}`, "read_file", `{"path":"x","offset":2}`, false},
		{"1 and 1.0 differ", "read_file", `{"offset":1}`, "read_file", `{"offset":1.0}`, false},
		{"same arguments to another tool differ", "read_file", `{"path":"x"}`, "list_dir", `{"path":"x"}`, false},
		{"empty and {} are the same", "checklist_list", ``, "checklist_list", `{}`, true},
		{"invalid JSON is compared raw", "run_shell", `{"command":`, "run_shell", `{"command":`, true},
		{"invalid JSON differs by whitespace", "run_shell", `{"command":`, "run_shell", `{"command": `, false},
		{"name and arguments cannot run together", "ab", `{}`, "a", `b{}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k1, k2 := Key(tc.tool1, tc.a1), Key(tc.tool2, tc.a2)
			if (k1 == k2) != tc.wantSame {
				t.Errorf("same = %v, want %v", k1 == k2, tc.wantSame)
			}
			if len(k1) != 64 {
				t.Errorf("key %q is not hex SHA-256", k1)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	const args = `{"path":"main.go","offset":1}`
	t.Run("first identical call runs", func(t *testing.T) {
		g := New()
		if v := g.Check("read_file", args); v.Blocked || v.Count != 1 || v.Message != "" {
			t.Errorf("%+v", v)
		}
	})
	t.Run("second identical call runs", func(t *testing.T) {
		g := New()
		g.Check("read_file", args)
		if v := g.Check("read_file", `{"offset":1, "path":"main.go"}`); v.Blocked || v.Count != 2 {
			t.Errorf("%+v", v)
		}
	})
	t.Run("exact repeat at threshold is blocked", func(t *testing.T) {
		g := New()
		g.Check("read_file", args)
		g.Check("read_file", args)
		v := g.Check("read_file", args)
		if !v.Blocked || v.Count != BlockAt {
			t.Fatalf("%+v", v)
		}
		for _, w := range []string{"not executed", "3rd call of read_file with these exact arguments in this turn", "different arguments", "different tool", "ask the user"} {
			if !strings.Contains(v.Message, w) {
				t.Errorf("message lacks %q: %s", w, v.Message)
			}
		}
	})
	t.Run("blocked calls still count", func(t *testing.T) {
		g := New()
		for range 3 {
			g.Check("read_file", args)
		}
		v := g.Check("read_file", args)
		if !v.Blocked || v.Count != 4 || !strings.Contains(v.Message, "4th call") {
			t.Errorf("%+v", v)
		}
	})
	t.Run("different offset is not the same call", func(t *testing.T) {
		g := New()
		for i := range 10 {
			if v := g.Check("read_file", fmt.Sprintf(`{"path":"main.go","offset":%d}`, i*400+1)); v.Blocked {
				t.Fatalf("page %d blocked: %+v", i, v)
			}
		}
	})
	t.Run("same arguments to different tools are counted apart", func(t *testing.T) {
		g := New()
		g.Check("read_file", `{"path":"x"}`)
		g.Check("read_file", `{"path":"x"}`)
		if v := g.Check("list_dir", `{"path":"x"}`); v.Blocked {
			t.Errorf("%+v", v)
		}
	})
	t.Run("reset between turns", func(t *testing.T) {
		g := New()
		for range 3 {
			g.Check("read_file", args)
		}
		g.Reset()
		if v := g.Check("read_file", args); v.Blocked || v.Count != 1 {
			t.Errorf("%+v", v)
		}
		if a := g.Alerts(); len(a) != 0 {
			t.Errorf("alerts after reset: %q", a)
		}
	})
	t.Run("invalid JSON arguments are counted too", func(t *testing.T) {
		g := New()
		var v Verdict
		for range 3 {
			v = g.Check("run_shell", `{"command": "ls`)
		}
		if !v.Blocked {
			t.Errorf("%+v", v)
		}
	})
	t.Run("odd tool name stays on one line", func(t *testing.T) {
		g := New()
		var v Verdict
		for range 3 {
			v = g.Check("bad\nname", `{}`)
		}
		if strings.Contains(v.Message, "\n") || !strings.Contains(v.Message, `"bad\nname"`) {
			t.Errorf("message %q", v.Message)
		}
	})
}

func TestRecord(t *testing.T) {
	t.Run("failures before the warning are silent", func(t *testing.T) {
		g := New()
		for i := 1; i < WarnAt; i++ {
			if o := g.Record("read_file", true); o.Warn || o.Halt || o.Message != "" || o.Consecutive != i {
				t.Errorf("failure %d: %+v", i, o)
			}
		}
	})
	t.Run("third consecutive failure warns", func(t *testing.T) {
		g := New()
		var o Outcome
		for range WarnAt {
			o = g.Record("read_file", true)
		}
		if !o.Warn || o.Halt || o.Consecutive != 3 || !strings.HasPrefix(o.Message, "warning: read_file has failed 3 times in a row;") {
			t.Errorf("%+v", o)
		}
	})
	t.Run("seventh consecutive failure still only warns", func(t *testing.T) {
		g := New()
		var o Outcome
		for range HaltAt - 1 {
			o = g.Record("read_file", true)
		}
		if !o.Warn || o.Halt || o.Consecutive != 7 {
			t.Errorf("%+v", o)
		}
	})
	t.Run("eighth consecutive failure halts", func(t *testing.T) {
		g := New()
		var o Outcome
		for range HaltAt {
			o = g.Record("run_shell", true)
		}
		if !o.Halt || o.Warn || o.Consecutive != 8 || !strings.Contains(o.Message, "Turn stopped: run_shell failed 8 times in a row") {
			t.Errorf("%+v", o)
		}
		if o = g.Record("run_shell", true); !o.Halt || o.Consecutive != 9 {
			t.Errorf("failure after the halt: %+v", o)
		}
	})
	t.Run("success resets the run", func(t *testing.T) {
		g := New()
		for range 5 {
			g.Record("grep", true)
		}
		if o := g.Record("grep", false); o != (Outcome{}) {
			t.Errorf("success gave %+v", o)
		}
		if o := g.Record("grep", true); o.Consecutive != 1 || o.Warn {
			t.Errorf("failure after success: %+v", o)
		}
	})
	t.Run("per-tool counters are independent", func(t *testing.T) {
		g := New()
		g.Record("grep", true)
		g.Record("grep", true)
		g.Record("read_file", true)
		g.Record("read_file", false)
		if o := g.Record("grep", true); !o.Warn || o.Consecutive != 3 {
			t.Errorf("grep: %+v", o)
		}
		if o := g.Record("read_file", true); o.Consecutive != 1 {
			t.Errorf("read_file: %+v", o)
		}
	})
	t.Run("reset clears failure runs", func(t *testing.T) {
		g := New()
		for range 5 {
			g.Record("grep", true)
		}
		g.Reset()
		if o := g.Record("grep", true); o.Consecutive != 1 {
			t.Errorf("%+v", o)
		}
	})
}

func TestAlerts(t *testing.T) {
	build := func(order []string) *Guard {
		g := New()
		for _, step := range order {
			switch step {
			case "block read_file":
				for range 3 {
					g.Check("read_file", `{"path":"a"}`)
				}
			case "block grep twice":
				for range 4 {
					g.Check("grep", `{"pattern":"x"}`)
				}
			case "fail run_shell":
				for range 3 {
					g.Record("run_shell", true)
				}
			case "fail edit_file once":
				g.Record("edit_file", true)
			}
		}
		return g
	}
	want := []string{
		"failures: run_shell failed 3 times in a row",
		"loop_guard: blocked repeated grep call (4x)",
		"loop_guard: blocked repeated read_file call (3x)",
	}
	t.Run("alerts are sorted and complete", func(t *testing.T) {
		got := build([]string{"block read_file", "fail run_shell", "block grep twice", "fail edit_file once"}).Alerts()
		if !slices.Equal(got, want) {
			t.Errorf("got %q\nwant %q", got, want)
		}
	})
	t.Run("alerts do not depend on call order", func(t *testing.T) {
		a := build([]string{"fail run_shell", "block grep twice", "block read_file"}).Alerts()
		for range 20 {
			b := build([]string{"block read_file", "block grep twice", "fail run_shell"}).Alerts()
			if !slices.Equal(a, b) {
				t.Fatalf("%q != %q", a, b)
			}
		}
	})
	t.Run("a success clears the failure alert", func(t *testing.T) {
		g := build([]string{"fail run_shell"})
		g.Record("run_shell", false)
		if a := g.Alerts(); len(a) != 0 {
			t.Errorf("%q", a)
		}
	})
	t.Run("no conditions gives an empty list", func(t *testing.T) {
		if a := New().Alerts(); a == nil || len(a) != 0 {
			t.Errorf("%#v", a)
		}
	})
}

func TestConcurrentUse(t *testing.T) {
	var g Guard // the zero value works too
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				g.Check("read_file", fmt.Sprintf(`{"n":%d}`, j%3))
				g.Record(fmt.Sprint("tool", i%2), j%4 != 0)
				_ = g.Alerts()
				if j == 50 && i == 0 {
					g.Reset()
				}
			}
		}()
	}
	wg.Wait()
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 102: "102nd", 111: "111th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %s, want %s", n, got, want)
		}
	}
}
