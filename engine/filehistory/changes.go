package filehistory

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strings"
)

// change is one path a command changed.
type change struct {
	rel          string
	old, now     Image
	oldOK, nowOK bool
	oldData      []byte // content of old when it was taken from git just now
}

// changes compares the state of every path that changed during a command
// (before, see view.pending) with its state now, in path order. A file
// whose earlier state is a git blob has that blob read now, from the
// repository's object store, so that what is recorded never depends on git
// later. w.mu must be held.
func (w *Workspace) changes(root *os.Root, v *view, before map[string]entry) []change {
	var objs *gitObjects
	defer func() {
		if objs != nil {
			objs.close()
		}
	}()
	blob := func(e entry) ([]byte, string) {
		if w.repo == nil {
			return nil, "its earlier content was in a git repository that is gone"
		}
		if objs == nil {
			objs = w.repo.openObjects(w.limits.FileBytes)
		}
		var id [20]byte
		copy(id[:], e.sum[:20])
		data, err := objs.blob(id)
		switch {
		case err == errNoObject:
			return nil, "its earlier content was to be read from git's object store, which no longer has it"
		case err != nil:
			return nil, "its earlier content could not be read from git's object store: " + err.Error()
		case int64(len(data)) != e.isize:
			return nil, "git's copy of its earlier content differs from the file (a filter or line-ending conversion), so that content was not kept"
		}
		return data, ""
	}
	var out []change
	for rel, b := range before {
		a, ok := v.files[rel]
		if !ok {
			a = entry{kind: kAbsent}
		}
		if b.kind == kAbsent && a.kind == kAbsent || b.sameStat(a) {
			continue
		}
		c := change{rel: rel, oldOK: b.kind != kAbsent, nowOK: a.kind != kAbsent}
		if a.git && a.sameImage(b) {
			continue // the same blob, as git's index says of both
		}
		if a.git {
			// Taken from the index by a full walk: read it, since its
			// state is what later conflicts are judged against.
			img, data := readImage(root, rel, w.limits)
			if img.Kind == File {
				if _, stored := w.sizes[img.SHA]; !stored {
					sum, _ := sumOf(img.SHA)
					w.stage.put(sum, data)
				}
			}
			c.now = img
		} else {
			c.now = a.image()
		}
		if b.git {
			data, why := blob(b)
			if why != "" {
				c.old = Image{Kind: Unrestorable, Size: b.Size, Why: why}
			} else {
				sum := sha256.Sum256(data)
				c.old = Image{Kind: File, SHA: hex.EncodeToString(sum[:]), Mode: b.Mode.Perm(), Size: int64(len(data))}
				c.oldData = data
			}
		} else {
			c.old = b.image()
		}
		if c.oldOK && c.nowOK && c.old.Same(c.now) {
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b change) int { return strings.Compare(a.rel, b.rel) })
	return out
}
