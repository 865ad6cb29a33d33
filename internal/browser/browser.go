// Package browser opens a web page in the user's browser, the way other
// desktop programs do: the commands of $BROWSER first (a list separated
// by colons, each with "%s" standing for the URL or the URL added at its
// end, as xdg-open and sensible-browser read it), then the system's
// opener (xdg-open, open or the Windows URL handler).
//
// Open returns once a browser was started; it never waits for the page to
// be closed.
package browser

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// ErrNoBrowser is returned when no browser could be started.
var ErrNoBrowser = errors.New("no web browser could be started; open the page yourself, or set $BROWSER to the command that opens one")

// Open starts the user's browser on url, an http or https address.
func Open(url string) error {
	if !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://") {
		return fmt.Errorf("%q is not a web address, so it is not opened", url)
	}
	for _, c := range commands(os.Getenv("BROWSER"), url) {
		if start(c) == nil {
			return nil
		}
	}
	return ErrNoBrowser
}

// commands are the command lines to try, in order.
func commands(env, url string) [][]string {
	var out [][]string
	for _, entry := range strings.Split(env, ":") {
		fields := strings.Fields(entry)
		if len(fields) == 0 {
			continue
		}
		used := false
		for i, f := range fields {
			if strings.Contains(f, "%s") {
				fields[i] = strings.ReplaceAll(strings.ReplaceAll(f, "%s", url), "%%", "%")
				used = true
			}
		}
		if !used {
			fields = append(fields, url)
		}
		out = append(out, fields)
	}
	switch runtime.GOOS {
	case "darwin":
		out = append(out, []string{"open", url})
	case "windows":
		out = append(out, []string{"rundll32", "url.dll,FileProtocolHandler", url})
	default:
		out = append(out, []string{"xdg-open", url})
	}
	return out
}

// start runs one command line without waiting for it to end; its exit is
// collected in the background.
func start(argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	cmd := exec.Command(path, argv[1:]...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
