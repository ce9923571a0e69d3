// Command plainwrite is the baseline of the write benchmarks: a plain durable
// writer, with nothing governed. Each write makes a temporary file in the
// target's directory, writes the content, fsyncs it, renames it over the
// target and fsyncs the directory, which is what any editor or tool that
// must not lose a save does. It prints the time the writes took, in
// nanoseconds, so that the benchmark compares writes with writes, not with
// process start.
//
//	plainwrite -dir D -n 1000 -size 65536 -files 32
//
// With -protocol governed it does, around the same writes, only the disk
// work of intentgate's crash protocol and none of its checks: a journal
// record rewritten in place and synced (fdatasync) while the temporary
// file's fsync runs, then, after the rename, a ledger line appended and
// synced while the directory's fsync runs. The time it takes over the plain
// writer's is the floor of the governed write's ratio on this disk: no CPU
// saved can take intentgate below it. -protocol ledger leaves out the
// journal record, the floor of a protocol whose only extra sync is the
// ledger's.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	dir := flag.String("dir", "", "directory to write in (created)")
	n := flag.Int("n", 1000, "number of writes")
	size := flag.Int("size", 64<<10, "bytes per write")
	files := flag.Int("files", 32, "number of distinct files, written in turn")
	protocol := flag.String("protocol", "plain", "plain, governed (the syncs of intentgate's crash protocol around each write) or ledger (governed without the journal record)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "plainwrite: -dir is required")
		os.Exit(2)
	}
	var w writer
	switch *protocol {
	case "plain":
		w = durableWrite
	case "governed", "ledger":
		g, err := newGoverned(*dir, *protocol == "governed")
		if err != nil {
			fmt.Fprintln(os.Stderr, "plainwrite:", err)
			os.Exit(1)
		}
		w = g.write
	default:
		fmt.Fprintf(os.Stderr, "plainwrite: -protocol %q: use plain, governed or ledger\n", *protocol)
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "plainwrite:", err)
		os.Exit(1)
	}
	if err := run(*dir, *n, *size, *files, w); err != nil {
		fmt.Fprintln(os.Stderr, "plainwrite:", err)
		os.Exit(1)
	}
}

type writer func(path string, data []byte) error

func run(dir string, n, size, files int, write writer) error {
	line := strings.Repeat("x", 63) + "\n"
	body := []byte(strings.Repeat(line, size/len(line)+1)[:size])
	start := time.Now()
	for i := range n {
		// Each write differs from the last, as the governed ones do.
		copy(body, fmt.Sprintf("%08d", i))
		if err := write(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i%files)), body); err != nil {
			return err
		}
	}
	fmt.Println(time.Since(start).Nanoseconds())
	return nil
}

func durableWrite(path string, data []byte) error { return durableWriteWith(path, data, nil, nil) }

// durableWriteWith is durableWrite with, when not nil, withContent run
// while the temporary file's fsync runs and withDir while the directory's
// does (the governed protocol's journal record and ledger line).
func durableWriteWith(path string, data []byte, withContent, withDir func() error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".plainwrite-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	err = inParallel(tmp.Sync, withContent)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return inParallel(d.Sync, withDir)
}
