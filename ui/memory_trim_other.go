//go:build !linux || !cgo

package ui

// trimCHeap does nothing here: only glibc's allocator is asked to hand
// its free memory back.
func trimCHeap() {}
