//go:build darwin

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

const sandboxExec = "/usr/bin/sandbox-exec"

func probe() (Mechanism, string) {
	if _, err := os.Stat(sandboxExec); err != nil {
		return None, sandboxExec + " is missing, so commands cannot be confined by Seatbelt"
	}
	return Seatbelt, ""
}

// confined runs argv under a Seatbelt profile with the policy's rules. macOS
// has no PID namespace and no subreaper: the command's process group is
// killed when it ends, but a process that left the group (setsid) survives.
func confined(ctx context.Context, _ Mechanism, p *Policy, dir, temp string, argv []string) (*exec.Cmd, error) {
	if r, err := filepath.EvalSymlinks(temp); err == nil {
		temp = r
	}
	args := append([]string{"-p", Profile(p, temp), "--"}, argv...)
	cmd := exec.CommandContext(ctx, sandboxExec, args...)
	cmd.Dir = dir
	unconfined(cmd)
	return cmd, nil
}

// Profile is the Seatbelt profile of p: every write refused except beneath
// the writable roots and temp, and the governance paths refused even there.
// In a profile the last matching rule wins.
func Profile(p *Policy, temp string) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*\n")
	for _, w := range append(append([]string{}, p.Writable...), temp) {
		fmt.Fprintf(&b, "  (subpath %s)\n", sbString(w))
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"} {
		fmt.Fprintf(&b, "  (literal %s)\n", sbString(d))
	}
	b.WriteString("  (regex #\"^/dev/ttys[0-9]+$\"))\n(deny file-write*\n")
	for _, g := range GovernanceNames {
		fmt.Fprintf(&b, "  (subpath %s)\n", sbString(filepath.Join(p.Workspace, g)))
	}
	for _, ro := range p.ReadOnly {
		fmt.Fprintf(&b, "  (subpath %s)\n", sbString(ro))
	}
	// .orchestration and .git at every depth, even those created later.
	ws := regexp.QuoteMeta(p.Workspace)
	fmt.Fprintf(&b, "  (regex %s))\n", sbRegex("^"+ws+"/(.*/)?\\.(orchestration|git)(/|$)"))
	for _, h := range p.Hidden {
		fmt.Fprintf(&b, "(deny file-read* (subpath %s))\n", sbString(h))
	}
	if p.NoNetwork {
		b.WriteString("(deny network*)\n(allow network* (remote unix-socket))\n")
	}
	return b.String()
}

func sbString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func sbRegex(s string) string {
	return `#"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

func unconfined(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

func shellArgv(command string) []string { return []string{"/bin/sh", "-c", command} }

func initMain(string) int {
	fmt.Fprintln(os.Stderr, "intentgate sandbox: the init is Linux only")
	return 125
}
