//go:build !unix

package main

import (
	"errors"
	"os/exec"
	"syscall"
)

// inGroup does nothing: process groups and their signals are Unix's.
func inGroup(*exec.Cmd) {}

// signalGroup fails: process groups and their signals are Unix's, and
// the tests that send them run on Unix only.
func signalGroup(*exec.Cmd, syscall.Signal) error {
	return errors.New("process groups are Unix's: this test runs on Unix only")
}
