//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// inGroup makes cmd, once started, the leader of a process group of its
// own, which signalGroup signals as a terminal's Ctrl-C would.
func inGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the process group of cmd (see inGroup).
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	return syscall.Kill(-cmd.Process.Pid, sig)
}
