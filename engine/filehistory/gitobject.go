package filehistory

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-billy/v5/helper/mount"
	"github.com/go-git/go-billy/v5/helper/polyfill"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// gitObjects reads blobs from a repository's object directories (loose
// objects and packs, with their deltas) through go-git's object storage,
// which only ever opens files there for reading.
type gitObjects struct {
	stores []*filesystem.ObjectStorage // one per object directory, in order
	limit  int64                       // largest object read
}

// maxObjectCache bounds the objects kept while reading, so that the blobs
// of a command that changed many files do not each unpack the same delta
// bases again.
const maxObjectCache = 32 * cache.MiByte

var errNoObject = errors.New("no such object")

// openObjects opens the repository's object directories for reading blobs
// of at most limit bytes. Alternates come from g.objects, resolved as git
// does, so go-git's own alternates lookup is given a file system holding
// nothing.
func (g *gitRepo) openObjects(limit int64) *gitObjects {
	o := &gitObjects{limit: limit}
	objects := cache.NewObjectLRU(maxObjectCache)
	for _, d := range g.objects {
		// go-git looks for objects under "objects/" of the file system
		// it is given; the directory itself need not be named so.
		fs := polyfill.New(mount.New(memfs.New(), "objects", osfs.New(d)))
		dir := dotgit.NewWithOptions(fs, dotgit.Options{AlternatesFS: memfs.New()})
		o.stores = append(o.stores, filesystem.NewObjectStorageWithOptions(dir, objects, filesystem.Options{
			KeepDescriptors:      true,
			LargeObjectThreshold: limit, // larger objects are not read into memory
		}))
	}
	return o
}

func (o *gitObjects) close() {
	for _, s := range o.stores {
		s.Close()
	}
}

// blob returns the content of blob id, checked against its id, from the
// first object directory that has it.
func (o *gitObjects) blob(id [20]byte) ([]byte, error) {
	first := errNoObject
	for _, s := range o.stores {
		data, err := o.read(s, plumbing.Hash(id))
		if err == nil {
			return data, nil
		}
		if first == errNoObject {
			first = err
		}
	}
	return nil, first
}

// read reads blob h from one object directory.
func (o *gitObjects) read(s *filesystem.ObjectStorage, h plumbing.Hash) (data []byte, err error) {
	defer func() {
		// The objects are files anyone may have written; whatever a
		// damaged one does to the reader, it is only not read.
		if recover() != nil {
			data, err = nil, fmt.Errorf("object %x is damaged", h[:6])
		}
	}()
	obj, err := s.EncodedObject(plumbing.BlobObject, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, errNoObject
	}
	if err != nil {
		return nil, err
	}
	if obj.Size() < 0 || obj.Size() > o.limit {
		return nil, fmt.Errorf("object %x is larger than the file size limit", h[:6])
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data = make([]byte, obj.Size())
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("object %x could not be read: %w", h[:6], err)
	}
	if plumbing.ComputeHash(plumbing.BlobObject, data) != h {
		return nil, fmt.Errorf("object %x is damaged", h[:6])
	}
	return data, nil
}
