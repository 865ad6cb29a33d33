//go:build linux && cgo

package ui

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

// tally_trim calls the C library's malloc_trim where it has one (glibc),
// which hands the free memory of the C heap back to the system.
static int tally_trim(void) {
	int (*trim)(size_t) = (int (*)(size_t))dlsym(RTLD_DEFAULT, "malloc_trim");
	return trim ? trim(0) : -1;
}
*/
import "C"

// trimCHeap hands the C heap's free memory back to the system, where the
// C library can (glibc's malloc_trim; elsewhere it does nothing).
func trimCHeap() { C.tally_trim() }
