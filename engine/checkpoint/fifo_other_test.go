//go:build !unix

package checkpoint

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this system") }
