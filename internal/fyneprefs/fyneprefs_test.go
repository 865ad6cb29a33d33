package fyneprefs

import (
	"bytes"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/app"

	_ "github.com/tally-dev/tally/internal/locale" // before the toolkit's init: C locales
)

// logged captures what the standard logger (the toolkit's) writes.
type logged struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logged) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logged) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// An empty preferences file, as a kill while the toolkit rewrote it
// leaves, is removed before the app is made, so the toolkit starts
// without logging "Preferences load error: EOF"; the file Path names is
// the one the toolkit writes.
func TestEmptyPreferencesFileLogsNoError(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd":
	default:
		t.Skip("the test sets XDG_CONFIG_HOME")
	}
	// The toolkit keeps writing in the folder after the test; it is not
	// a t.TempDir, whose removal would then fail.
	cfg, err := os.MkdirTemp("", "fyneprefs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		time.Sleep(200 * time.Millisecond)
		os.RemoveAll(cfg)
	})
	t.Setenv("XDG_CONFIG_HOME", cfg)
	const id = "dev.tally.test"
	path := Path(id)
	if path != filepath.Join(cfg, "fyne", id, "preferences.json") {
		t.Fatalf("Path = %q", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if did, err := Repair(path); err != nil || !strings.Contains(did, "removed the empty") {
		t.Fatalf("Repair = %q, %v", did, err)
	}
	var out logged
	log.SetOutput(&out)
	defer log.SetOutput(os.Stderr)
	a := app.NewWithID(id)
	if strings.Contains(out.String(), "Preferences load error") {
		t.Errorf("the toolkit logged:\n%s", out.String())
	}
	a.Preferences().SetString("probe", "kept")
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), `"probe":"kept"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the toolkit did not write its preferences to %s: %q", path, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(out.String(), "error") {
		t.Errorf("the toolkit logged:\n%s", out.String())
	}
}

// A file that is not JSON is moved aside; a good one, a missing one and
// "" are left alone.
func TestRepair(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "preferences.json")
	if did, err := Repair(path); did != "" || err != nil {
		t.Errorf("missing: %q, %v", did, err)
	}
	if did, err := Repair(""); did != "" || err != nil {
		t.Errorf("no path: %q, %v", did, err)
	}
	os.WriteFile(path, []byte(`{"a":1}`+"\n"), 0o600)
	if did, err := Repair(path); did != "" || err != nil {
		t.Errorf("good: %q, %v", did, err)
	}
	os.WriteFile(path, []byte(" \n"), 0o600)
	if did, err := Repair(path); err != nil || did == "" {
		t.Errorf("blank: %q, %v", did, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the blank file is still there: %v", err)
	}
	os.WriteFile(path, []byte(`{"fyne:fileDialogLastFol`), 0o600)
	if did, err := Repair(path); err != nil || !strings.Contains(did, "damaged") {
		t.Errorf("cut short: %q, %v", did, err)
	}
	if data, err := os.ReadFile(path + ".damaged"); err != nil || string(data) != `{"fyne:fileDialogLastFol` {
		t.Errorf("the damaged file was not kept: %q, %v", data, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the damaged file is still in place: %v", err)
	}
}
