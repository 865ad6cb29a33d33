//go:build !unix

package filehistory

// openNonblock is zero where FIFOs cannot block an open.
const openNonblock = 0
