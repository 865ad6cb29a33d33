package secrets

// keywordIndex finds every occurrence of a set of keywords in one pass over
// a text, ignoring ASCII case (an Aho-Corasick automaton over byte classes,
// built once).
type keywordIndex struct {
	class   [256]uint8 // byte -> class; 0 is "no keyword has this byte"
	nclass  int
	next    []int32 // state*nclass + class -> next state
	out     [][]int // state -> indexes of the keywords ending there
	lens    []int   // keyword index -> length
	owners  [][]int // keyword index -> rule indexes
	nstates int
}

// newKeywordIndex builds the automaton for words (lower case, non-empty);
// owners[i] lists the rules that use words[i].
func newKeywordIndex(words []string, owners [][]int) *keywordIndex {
	k := &keywordIndex{owners: owners}
	k.nclass = 1
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			c := w[i]
			if k.class[c] == 0 {
				k.class[c] = uint8(k.nclass)
				k.nclass++
			}
		}
		k.lens = append(k.lens, len(w))
	}
	for c := 'A'; c <= 'Z'; c++ {
		k.class[c] = k.class[c+'a'-'A']
	}

	// Trie: goto[state][class], -1 meaning none.
	type node struct {
		child []int32
		fail  int32
		out   []int
	}
	newNode := func() node {
		ch := make([]int32, k.nclass)
		for i := range ch {
			ch[i] = -1
		}
		return node{child: ch}
	}
	nodes := []node{newNode()}
	for wi, w := range words {
		s := int32(0)
		for i := 0; i < len(w); i++ {
			c := k.class[w[i]]
			if nodes[s].child[c] < 0 {
				nodes[s].child[c] = int32(len(nodes))
				nodes = append(nodes, newNode())
			}
			s = nodes[s].child[c]
		}
		nodes[s].out = append(nodes[s].out, wi)
	}
	// Breadth-first: failure links, merged outputs and the full transition
	// table.
	queue := make([]int32, 0, len(nodes))
	for c := 0; c < k.nclass; c++ {
		if ch := nodes[0].child[c]; ch >= 0 {
			nodes[ch].fail = 0
			queue = append(queue, ch)
		} else {
			nodes[0].child[c] = 0
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := nodes[s].fail
		nodes[s].out = append(nodes[s].out, nodes[f].out...)
		for c := 0; c < k.nclass; c++ {
			ch := nodes[s].child[c]
			if ch >= 0 {
				nodes[ch].fail = nodes[f].child[c]
				queue = append(queue, ch)
			} else {
				nodes[s].child[c] = nodes[f].child[c]
			}
		}
	}
	k.nstates = len(nodes)
	k.next = make([]int32, len(nodes)*k.nclass)
	k.out = make([][]int, len(nodes))
	for s, n := range nodes {
		copy(k.next[s*k.nclass:], n.child)
		k.out[s] = n.out
	}
	return k
}

// scan calls hit(rule, start, end) for every keyword occurrence in text, in
// order of end offset, once per rule owning the keyword.
func (k *keywordIndex) scan(text string, hit func(rule, start, end int)) {
	if k == nil || k.nstates <= 1 {
		return
	}
	s := int32(0)
	nclass := int32(k.nclass)
	for i := 0; i < len(text); i++ {
		s = k.next[s*nclass+int32(k.class[text[i]])]
		if out := k.out[s]; out != nil {
			for _, wi := range out {
				start := i + 1 - k.lens[wi]
				for _, r := range k.owners[wi] {
					hit(r, start, i+1)
				}
			}
		}
	}
}
