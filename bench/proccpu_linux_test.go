package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// procCPU is the CPU time (user + system) process pid has used so far, from
// /proc/PID/stat: the share of a shared machine's load a server itself
// costs per call holds better than its wall time. ok is false when it
// cannot be read.
func procCPU(pid int) (d time.Duration, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 || i+2 > len(s) {
		return 0, false
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return 0, false
	}
	// Fields 14 and 15 of the line (utime, stime), in clock ticks of
	// USER_HZ, which Linux fixes at 100 for user space.
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+st) * 10 * time.Millisecond, true
}
