//go:build !unix

package safefile

// oNonblock is zero where FIFOs do not block an open.
const oNonblock = 0
