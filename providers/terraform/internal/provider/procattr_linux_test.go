package provider

import "syscall"

// serverProcAttr puts the server in its own process group (stopped as a whole) and ends it with
// the test binary, even when a test calls os.Exit before TestMain can stop it.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
