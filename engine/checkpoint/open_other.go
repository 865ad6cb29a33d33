//go:build !unix

package checkpoint

// openNonblock is zero where FIFOs cannot block an open.
const openNonblock = 0
