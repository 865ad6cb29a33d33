package filehistory

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// countingReader counts the reads made of it.
type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// A file that holds what its stat said is read in one system call; one
// that grew or shrank since is still read whole, up to the limit.
func TestReadAllReadsWhatTheFileHolds(t *testing.T) {
	cases := []struct {
		name        string
		content     string
		size, limit int64
		want        string
		maxReads    int
	}{
		{"as stat said", "0123456789", 10, 100, "0123456789", 1},
		{"empty", "", 0, 100, "", 1},
		{"grew", strings.Repeat("x", 50), 10, 100, strings.Repeat("x", 50), 10},
		{"shrank", "01234", 10, 100, "01234", 2},
		{"grew past the limit", strings.Repeat("y", 300), 10, 100, strings.Repeat("y", 101), 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &countingReader{r: bytes.NewReader([]byte(c.content))}
			got, err := readAll(r, c.size, c.limit)
			if err != nil || string(got) != c.want {
				t.Fatalf("readAll = %d bytes, %v; want %d bytes", len(got), err, len(c.want))
			}
			if r.reads > c.maxReads {
				t.Errorf("%d reads; want at most %d", r.reads, c.maxReads)
			}
		})
	}
}
