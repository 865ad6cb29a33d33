//go:build !unix

package filehistory

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this system") }
