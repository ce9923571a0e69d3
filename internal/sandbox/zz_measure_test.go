package sandbox

import (
	"context"
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"
)

func TestZZMeasure(t *testing.T) {
	if os.Getenv("MEASURE") == "" {
		t.Skip()
	}
	ws := t.TempDir()
	p, err := ForScope(ws, []string{"**"}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var conf, unconf []time.Duration
	for i := 0; i < 25; i++ {
		st := time.Now()
		cmd, cleanup, err := Command(context.Background(), p, ws, []string{"true"})
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		cleanup()
		conf = append(conf, time.Since(st))
		st = time.Now()
		if err := exec.Command("true").Run(); err != nil {
			t.Fatal(err)
		}
		unconf = append(unconf, time.Since(st))
	}
	med := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	t.Logf("confined median %v (min %v, max %v); unconfined median %v (min %v, max %v)", med(conf), conf[0], conf[len(conf)-1], med(unconf), unconf[0], unconf[len(unconf)-1])
}
