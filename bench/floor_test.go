package bench

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkDiskFloor: the floor of BenchmarkDispatchWrite64K's ratio on
// this disk. Each round, plainwrite makes 1,000 durable writes of 64 KiB
// three ways, alternately: plain (2 syncs per write: the file, its
// directory); governed (the 4 syncs intentgate's crash protocol waits for:
// the journal record with the file, the ledger line with the directory,
// and no other work); ledger (governed without the journal record: the
// floor of a protocol whose only extra sync is the ledger's). Ratios:
// governed and ledger over plain. A device that serialises cache flushes
// puts the governed floor near 2 whatever the CPU does.
func BenchmarkDiskFloor(b *testing.B) {
	const n = 1000
	dir := b.TempDir()
	run := func(protocol string) time.Duration {
		d := filepath.Join(dir, protocol)
		out, err := exec.Command(helper(b, "plainwrite"), "-dir", d, "-n", strconv.Itoa(n), "-size", strconv.Itoa(64<<10), "-protocol", protocol).Output()
		if err != nil {
			b.Fatalf("plainwrite -protocol %s: %v", protocol, err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		if err != nil {
			b.Fatalf("plainwrite printed %q", out)
		}
		return time.Duration(ns)
	}
	var plainT, govT, ledgerT []time.Duration
	for _, p := range []string{"plain", "governed", "ledger"} {
		run(p) // the 32 files exist before the clock starts
	}
	for b.Loop() {
		plainT = append(plainT, run("plain"))
		govT = append(govT, run("governed"))
		ledgerT = append(ledgerT, run("ledger"))
	}
	mp, mg, ml := median(plainT), median(govT), median(ledgerT)
	b.ReportMetric(float64(mp.Microseconds())/n, "us/write-plain")
	b.ReportMetric(float64(mg.Microseconds())/n, "us/write-governed-disk")
	b.ReportMetric(float64(mg)/float64(mp), "ratio-governed")
	b.ReportMetric(float64(ml)/float64(mp), "ratio-ledger-only")
	b.Logf("disk floor, 1,000 writes of 64 KiB: plain %v, governed syncs %v (ratio %.2f), ledger sync only %v (ratio %.2f)",
		mp, mg, float64(mg)/float64(mp), ml, float64(ml)/float64(mp))
}
