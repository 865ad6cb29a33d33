package diff

import (
	"bytes"
	"testing"
)

// FuzzDiffApply diffs any two texts: it never panics, the hunks' lines
// are numbered consistently, accepting every hunk gives the after-text
// byte for byte, and accepting none gives the before-text.
func FuzzDiffApply(f *testing.F) {
	before, after := threeHunks()
	f.Add(before, after)
	f.Add([]byte("a\nb\nc"), []byte("a\r\nb\nc\n"))
	f.Add([]byte(""), []byte("new\n"))
	f.Fuzz(func(t *testing.T, before, after []byte) {
		d := Compute("f.txt", before, after, true)
		if d.Binary || d.TooLarge {
			return
		}
		all := make([]bool, len(d.Hunks))
		for i := range all {
			all[i] = true
		}
		got, err := Apply(before, d, all)
		if err != nil || !bytes.Equal(got, after) {
			t.Fatalf("accepting every hunk gave %q (%v), want %q", got, err, after)
		}
		got, err = Apply(before, d, make([]bool, len(d.Hunks)))
		if err != nil || !bytes.Equal(got, before) {
			t.Fatalf("accepting no hunk gave %q (%v), want %q", got, err, before)
		}
		for _, h := range d.Hunks {
			old, nw := 0, 0
			for _, l := range h.Lines {
				if l.Kind != Add {
					old++
				}
				if l.Kind != Remove {
					nw++
				}
			}
			if old != h.OldLines || nw != h.NewLines {
				t.Fatalf("hunk %+v counts %d old and %d new lines", h, old, nw)
			}
		}
	})
}
