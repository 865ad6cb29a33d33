//go:build !unix

package filehistory

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
