package browser

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestCommandsFollowTheBrowserConvention(t *testing.T) {
	got := commands("firefox --new-tab:chromium %s:: w3m '%s'", "https://x/y")
	want := [][]string{{"firefox", "--new-tab", "https://x/y"}, {"chromium", "https://x/y"}, {"w3m", "'https://x/y'"}}
	if !reflect.DeepEqual(got[:3], want) {
		t.Fatalf("commands = %q", got)
	}
	if len(got) != 4 {
		t.Fatalf("the system opener is not tried last: %q", got)
	}
}

func TestOpenRunsBrowserWithTheURL(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	script := filepath.Join(dir, "fake-browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$1\" > "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", "no-such-browser-anywhere:"+script)
	if err := Open("https://example.test/a?b=c"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, err := os.ReadFile(out)
		if err == nil && string(data) == "https://example.test/a?b=c\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the browser saw %q (%v)", data, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOpenRefusesWhatIsNotAWebAddress(t *testing.T) {
	if err := Open("file:///etc/passwd"); err == nil {
		t.Fatal("a file URL was opened")
	}
}
