//go:build unix && !linux

package provider

import "syscall"

// serverProcAttr puts the server in its own process group, stopped as a whole.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
