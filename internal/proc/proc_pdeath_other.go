//go:build unix && !linux

package proc

import "syscall"

// setParentDeathSignal does nothing: only Linux has a parent-death signal.
func setParentDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}
