package chat

import tw "github.com/tally-dev/tally/ui/widget"

// The Markdown of the chat's replies is parsed when a row shows it, and
// only the most recently shown replies keep theirs: a long session does
// not hold a parsed tree for every answer it ever had.

// docsKept is how many replies keep their parsed Markdown.
const docsKept = 128

// docRing holds the replies whose Markdown is parsed, oldest first from
// next.
type docRing struct {
	items [docsKept]*Item
	next  int
}

// doc returns the parsed Markdown of reply it (nil for blank text),
// parsing it if it is not kept.
func (c *View) doc(it *Item) *tw.Doc {
	if it.md != nil {
		return it.md
	}
	it.md = tw.ParseDoc(it.Text)
	if it.md == nil {
		return nil
	}
	r := &c.docs
	if old := r.items[r.next]; old != nil && old != it {
		old.md = nil
	}
	r.items[r.next] = it
	r.next = (r.next + 1) % docsKept
	return it.md
}
