package lsp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
)

// maxMessage bounds one message a server sends, in bytes: a server that
// announces a larger one is treated as broken rather than given the memory.
const maxMessage = 64 << 20

// codec frames messages with LSP's Content-Length headers. Writing is the
// library's [jsonrpc2.VSCodeObjectCodec]; reading is stricter than it: the
// header is matched case-insensitively, the body is read whole and
// bounded, so a message whose JSON ends early cannot desynchronise the
// stream, and a malformed one ends the connection with an error. When
// malformed is set, it hears of that error before the connection closes.
type codec struct {
	malformed func(error)
}

func (codec) WriteObject(w io.Writer, obj any) error {
	return jsonrpc2.VSCodeObjectCodec{}.WriteObject(w, obj)
}

func (c codec) ReadObject(r *bufio.Reader, v any) error {
	err := readObject(r, v)
	if err != nil && c.malformed != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, os.ErrClosed) {
		c.malformed(err)
	}
	return err
}

func readObject(r *bufio.Reader, v any) error {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if len(line) > 1024 {
			return errors.New("the server sent a header line over 1 KB")
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if length < 0 {
				continue // tolerate stray blank lines between messages
			}
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return fmt.Errorf("the server sent %q where a message header belongs; it may write to stdout what belongs to stderr", clipLine(line))
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return fmt.Errorf("the server sent a malformed Content-Length %q", clipLine(value))
			}
			length = n
		}
	}
	if length > maxMessage {
		return fmt.Errorf("the server announced a message of %d bytes, over the limit of %d", length, maxMessage)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("the server sent a message that is not valid JSON-RPC (%w)", err)
	}
	return nil
}

func clipLine(s string) string {
	if len(s) > 80 {
		s = s[:80]
	}
	return strings.ToValidUTF8(s, "?")
}

// pipes joins the server's stdout (read) and stdin (write) into the one
// stream the connection needs; Close closes both.
type pipes struct {
	r *os.File
	w *os.File
}

func (p pipes) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipes) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipes) Close() error {
	err := p.w.Close()
	if err2 := p.r.Close(); err == nil {
		err = err2
	}
	return err
}

// fileURI is the file URI of the absolute path p.
func fileURI(p string) string {
	p = filepath.ToSlash(p)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x → /C:/x
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// uriPath is the absolute path of a file URI, or "" when u is not one.
func uriPath(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || !strings.EqualFold(parsed.Scheme, "file") || parsed.Path == "" {
		return ""
	}
	p := parsed.Path
	if runtime.GOOS == "windows" {
		p = strings.TrimPrefix(p, "/")
	}
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

// lineAt returns line n (0-based) of text without its line ending, and
// whether text has that line.
func lineAt(text string, n int) (string, bool) {
	if n < 0 {
		return "", false
	}
	for i := 0; i < n; i++ {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			return "", false
		}
		text = text[j+1:]
	}
	if j := strings.IndexByte(text, '\n'); j >= 0 {
		text = text[:j]
	}
	return strings.TrimSuffix(text, "\r"), true
}

// runeColumn converts a position's character offset (UTF-16 code units,
// 0-based) on line to a 1-based column in characters (code points). An
// offset past the end of the line counts one column a unit.
func runeColumn(line string, units int) int {
	col := 1
	for _, r := range line {
		if units <= 0 {
			return col
		}
		units -= utf16Len(r)
		col++
	}
	if units > 0 {
		col += units
	}
	return col
}

// utf16Offset converts a 1-based column in characters on line to the
// 0-based UTF-16 offset a position needs; a column past the line's end is
// kept past it, one unit a column.
func utf16Offset(line string, col int) int {
	units := 0
	for _, r := range line {
		if col <= 1 {
			return units
		}
		units += utf16Len(r)
		col--
	}
	if col > 1 {
		units += col - 1
	}
	return units
}

func utf16Len(r rune) int {
	if r == utf8.RuneError {
		return 1
	}
	return len(utf16.Encode([]rune{r}))
}
