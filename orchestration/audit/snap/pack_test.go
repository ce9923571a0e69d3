package snap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain runs the pack writer of TestPackConcurrentProcesses when the
// test binary is started as one.
func TestMain(m *testing.M) {
	if dir := os.Getenv("SNAP_TEST_WRITER_DIR"); dir != "" {
		os.Exit(writerProcess(dir))
	}
	os.Exit(m.Run())
}

// version is the content of version i of writer w's file: distinct for
// every (w, i), with i+3 lines.
func version(w, i int) []byte {
	var b strings.Builder
	for l := 0; l < i+3; l++ {
		fmt.Fprintf(&b, "writer %d version %d line %d\n", w, i, l)
	}
	return []byte(b.String())
}

func writerProcess(dir string) int {
	w, _ := strconv.Atoi(os.Getenv("SNAP_TEST_WRITER"))
	n, _ := strconv.Atoi(os.Getenv("SNAP_TEST_WRITES"))
	if r, err := strconv.ParseInt(os.Getenv("SNAP_TEST_ROLL"), 10, 64); err == nil {
		rollBytes = r
	}
	s := OpenStore(dir)
	defer s.Close()
	for i := 0; i < n; i++ {
		v := version(w, i)
		if err := s.writeFingerprints(SHA256Hex(v), Fingerprints(SplitLines(v))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if i == 0 {
			fmt.Println("started")
		}
	}
	return 0
}

// record is the pack record of content.
func record(content []byte) []byte {
	sum, _ := sumOf(SHA256Hex(content))
	return appendRecord(nil, &sum, Fingerprints(SplitLines(content)))
}

// The record layout, checked against the format's description by hand.
func TestRecordLayout(t *testing.T) {
	content := []byte("a\nb\n")
	r := record(content)
	if len(r) != 48+16+4 || string(r[:8]) != "IGSNPR01" {
		t.Fatalf("record = %d bytes %q, want 68 starting IGSNPR01", len(r), r[:8])
	}
	sum, _ := sumOf(SHA256Hex(content))
	if !bytes.Equal(r[8:40], sum[:]) || binary.LittleEndian.Uint32(r[40:]) != 2 {
		t.Errorf("header = %x", r[:44])
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	if binary.LittleEndian.Uint32(r[44:]) != crc32.Checksum(r[:44], tab) {
		t.Error("header CRC is not CRC-32C of the first 44 bytes")
	}
	if binary.LittleEndian.Uint32(r[48:]) != uint32(LineFP([]byte("a"))) || binary.LittleEndian.Uint32(r[52:]) != uint32(LineFP([]byte("a"))>>32) {
		t.Error("first fingerprint not little endian at 48")
	}
	if binary.LittleEndian.Uint32(r[64:]) != crc32.Checksum(r[:64], tab) {
		t.Error("record CRC is not CRC-32C of the rest")
	}
}

func packPath(dir string) string { return filepath.Join(dir, "snap", "pack") }

func writeAll(t *testing.T, dir string, contents ...[]byte) {
	t.Helper()
	s := OpenStore(dir)
	defer s.Close()
	for _, c := range contents {
		if err := s.Write(SHA256Hex(c), c); err != nil {
			t.Fatal(err)
		}
	}
}

// readable reports which of contents a fresh Store reads back, with the
// right fingerprints; a wrong one fails the test.
func readable(t *testing.T, dir string, contents ...[]byte) []bool {
	t.Helper()
	s := OpenStore(dir)
	defer s.Close()
	out := make([]bool, len(contents))
	for i, c := range contents {
		fps, ok := s.Read(SHA256Hex(c))
		if ok && !slices.Equal(fps, Fingerprints(SplitLines(c))) {
			t.Fatalf("content %d read back as %x", i, fps)
		}
		out[i] = ok
	}
	return out
}

// A pack cut anywhere in its last record (a crash mid-append) keeps the
// records before it, and a record appended after the torn one (the next
// process) is found again.
func TestPackTornTail(t *testing.T) {
	a, b, c := version(0, 5), version(0, 6), version(0, 7)
	dir := t.TempDir()
	writeAll(t, dir, a, b, c)
	whole, err := os.ReadFile(packPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	lastStart := len(record(a)) + len(record(b))
	if len(whole) != lastStart+len(record(c)) {
		t.Fatalf("pack of %d bytes, want %d", len(whole), lastStart+len(record(c)))
	}
	for cut := lastStart; cut < len(whole); cut++ {
		if err := os.WriteFile(packPath(dir), whole[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		if got := readable(t, dir, a, b, c); !slices.Equal(got, []bool{true, true, false}) {
			t.Fatalf("pack cut at %d: readable %v, want [true true false]", cut, got)
		}
		// Another process appends after the cut record: once a record
		// of its own length, once one exactly as long as what the cut
		// record lacks (its claimed end is the pack's end).
		lacks := len(whole) - cut
		for _, d := range [][]byte{version(1, cut%7), version(4, (lacks-52)/8-3)} {
			if err := os.WriteFile(packPath(dir), whole[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			writeAll(t, dir, d)
			if got := readable(t, dir, a, b, c, d); !slices.Equal(got, []bool{true, true, false, true}) {
				t.Fatalf("pack cut at %d, then %d bytes appended: readable %v, want [true true false true]", cut, len(record(d)), got)
			}
		}
	}
}

// A record with any byte changed is not a snapshot (never other
// fingerprints), and the records around it stay readable, whether the
// change hit its header (the reader looks for the next record) or its
// body.
func TestPackCorruptRecord(t *testing.T) {
	a, b, c := version(0, 2), version(0, 3), version(0, 4)
	dir := t.TempDir()
	writeAll(t, dir, a, b, c)
	whole, err := os.ReadFile(packPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	start, end := len(record(a)), len(record(a))+len(record(b))
	for i := start; i < end; i++ {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			bad := bytes.Clone(whole)
			bad[i] ^= flip
			if err := os.WriteFile(packPath(dir), bad, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := readable(t, dir, a, b, c); !slices.Equal(got, []bool{true, false, true}) {
				t.Fatalf("byte %d of the second record ^%#x: readable %v, want [true false true]", i-start, flip, got)
			}
		}
	}
	// Zeros where a record was (blocks a crash never wrote) and garbage
	// between records.
	bad := bytes.Clone(whole)
	clear(bad[start:end])
	if err := os.WriteFile(packPath(dir), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readable(t, dir, a, b, c); !slices.Equal(got, []bool{true, false, true}) {
		t.Fatalf("a zeroed record: readable %v, want [true false true]", got)
	}
	bad = slices.Concat(whole[:start], []byte("IGSNPR01 not a record IGSNPR"), whole[start:])
	if err := os.WriteFile(packPath(dir), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readable(t, dir, a, b, c); !slices.Equal(got, []bool{true, true, true}) {
		t.Fatalf("garbage between records: readable %v, want all", got)
	}
}

// Records of another content's hash, or a record whose count disagrees
// with its length, are not taken.
func TestPackRecordForOtherHash(t *testing.T) {
	a, b := version(0, 1), version(0, 2)
	dir := t.TempDir()
	// b's fingerprints under a's hash, with CRCs that check: the reader
	// takes the record for a (a cache holds what it was given), so this
	// is about b, which has no record of its own.
	sum, _ := sumOf(SHA256Hex(a))
	rec := appendRecord(nil, &sum, Fingerprints(SplitLines(b)))
	if err := os.MkdirAll(filepath.Dir(packPath(dir)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(packPath(dir), rec, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := Read(dir, SHA256Hex(b)); ok {
		t.Error("b read from a record filed under a's hash")
	}
	if _, ok := parseRecord(rec[:len(rec)-8], &sum); ok {
		t.Error("a record shorter than its count says was taken")
	}
}

// Several processes appending to the same pack at once, with the pack
// rolled aside as it grows: every snapshot each wrote reads back, and
// every byte of every pack belongs to a record that checks (no append was
// torn or mixed with another).
func TestPackConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	const writers, writes = 6, 150
	var cmds []*exec.Cmd
	for w := 0; w < writers; w++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "SNAP_TEST_WRITER_DIR="+dir, "SNAP_TEST_WRITER="+strconv.Itoa(w),
			"SNAP_TEST_WRITES="+strconv.Itoa(writes), "SNAP_TEST_ROLL=200000")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	var all [][]byte
	for w := 0; w < writers; w++ {
		for i := 0; i < writes; i++ {
			all = append(all, version(w, i))
		}
	}
	for i, ok := range readable(t, dir, all...) {
		if !ok {
			t.Errorf("writer %d's version %d not found", i/writes, i%writes)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "snap"))
	if err != nil {
		t.Fatal(err)
	}
	packs, records := 0, 0
	for _, e := range entries {
		if !isPackName(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "snap", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		packs++
		for off := 0; off < len(b); {
			sum, n, ok := parseHeader(b[off:])
			if !ok || off+recordLen(n) > len(b) {
				t.Fatalf("%s: no whole record at %d", e.Name(), off)
			}
			if _, ok := parseRecord(b[off:off+recordLen(n)], &sum); !ok {
				t.Fatalf("%s: the record at %d does not check", e.Name(), off)
			}
			off += recordLen(n)
			records++
		}
	}
	if records != writers*writes {
		t.Errorf("%d records in the packs, want %d", records, writers*writes)
	}
	if packs < 2 {
		t.Errorf("%d packs: the pack was never rolled", packs)
	}
	t.Logf("%d records in %d packs", records, packs)
}

// Writers SIGKILLed at random points while others append (a crash mid
// record): every snapshot of the writers that were not killed reads back,
// and so does every one a killed writer finished before the last it began.
func TestPackWritersKilled(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL mid-write on Windows")
	}
	dir := t.TempDir()
	const writers, writes = 4, 200
	for round := 0; round < 4; round++ {
		var cmds []*exec.Cmd
		var outs []io.Reader
		for w := 0; w < writers; w++ {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "SNAP_TEST_WRITER_DIR="+dir, "SNAP_TEST_WRITER="+strconv.Itoa(round*writers+w),
				"SNAP_TEST_WRITES="+strconv.Itoa(writes))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			outs = append(outs, out)
			cmds = append(cmds, cmd)
		}
		// Kill the first writer a moment after its first append, while
		// it appends more.
		if _, err := outs[0].Read(make([]byte, 8)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(1+round*3) * time.Millisecond)
		cmds[0].Process.Kill()
		cmds[0].Wait()
		for _, cmd := range cmds[1:] {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("writer: %v", err)
			}
		}
		for w := 1; w < writers; w++ {
			var all [][]byte
			for i := 0; i < writes; i++ {
				all = append(all, version(round*writers+w, i))
			}
			for i, ok := range readable(t, dir, all...) {
				if !ok {
					t.Fatalf("round %d: writer %d's version %d not found", round, w, i)
				}
			}
		}
		// The killed writer's versions are found up to some point, not
		// necessarily its last one.
		var killed [][]byte
		for i := 0; i < writes; i++ {
			killed = append(killed, version(round*writers, i))
		}
		found := readable(t, dir, killed...)
		n := 0
		for n < len(found) && found[n] {
			n++
		}
		for i := n + 1; i < len(found); i++ {
			if found[i] {
				t.Errorf("round %d: the killed writer's version %d found after a gap at %d", round, i, n)
			}
		}
		t.Logf("round %d: the killed writer got %d of %d snapshots in", round, n, writes)
	}
}

// A pack past the roll size is renamed aside and a new one begun; readers
// find snapshots in both.
func TestPackRolls(t *testing.T) {
	defer func(r int64) { rollBytes = r }(rollBytes)
	rollBytes = 1000
	dir := t.TempDir()
	var all [][]byte
	for i := 0; i < 40; i++ {
		all = append(all, version(2, i))
	}
	writeAll(t, dir, all...)
	entries, _ := os.ReadDir(filepath.Join(dir, "snap"))
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Size() >= 1000+int64(recordLen(43)) {
			t.Errorf("%s: %d bytes, past the roll size by more than a record", e.Name(), fi.Size())
		}
	}
	if len(entries) < 5 {
		t.Errorf("%d packs, want a roll every few records", len(entries))
	}
	for i, ok := range readable(t, dir, all...) {
		if !ok {
			t.Errorf("version %d not found", i)
		}
	}
}

// A reader lists the headers of a rolled pack in PACK.idx, and later
// readers take them from there, scanning only what was appended since.
// An .idx that is damaged, lies about offsets, or claims more than the pack
// holds never yields wrong fingerprints: at worst a snapshot is not found,
// and one that does not check is not used at all.
func TestPackIdx(t *testing.T) {
	defer func(r int64) { rollBytes = r }(rollBytes)
	rollBytes = 3000
	dir := t.TempDir()
	var all [][]byte
	for i := 0; i < 30; i++ {
		all = append(all, version(5, i))
	}
	writeAll(t, dir, all...)
	readable(t, dir, all...)
	idxs, _ := filepath.Glob(filepath.Join(dir, "snap", "pack-*.idx"))
	packs, _ := filepath.Glob(filepath.Join(dir, "snap", "pack-*"))
	if len(idxs) == 0 || len(idxs)*2 != len(packs) {
		t.Fatalf("%d .idx files for %d rolled packs, want one each", len(idxs), len(packs)-len(idxs))
	}
	for i, ok := range readable(t, dir, all...) {
		if !ok {
			t.Fatalf("version %d not found through the .idx", i)
		}
	}
	// A record appended to a rolled pack after its .idx was written (a
	// process that had it open) is found.
	pack := strings.TrimSuffix(idxs[0], idxSuffix)
	late := version(6, 1)
	f, err := os.OpenFile(pack, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(record(late))
	f.Close()
	if got := readable(t, dir, late); !got[0] {
		t.Error("a record appended after the .idx was not found")
	}
	good, err := os.ReadFile(idxs[0])
	if err != nil {
		t.Fatal(err)
	}
	// Entries that point at another record (CRC fixed up) find nothing
	// wrong; an .idx that does not check is ignored and the pack scanned.
	var ents []idxEntry
	covered := parseIdx(good, 1<<40, func(sum [32]byte, off int64, n int) { ents = append(ents, idxEntry{sum, off, n}) })
	if covered == 0 || len(ents) < 2 {
		t.Fatalf("the .idx lists %d records covering %d bytes", len(ents), covered)
	}
	ents[0].off, ents[1].off = ents[1].off, ents[0].off
	ents[0].n, ents[1].n = ents[1].n, ents[0].n
	writeIdx = false
	defer func() { writeIdx = true }()
	if err := os.WriteFile(idxs[0], encodeIdx(ents, covered), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, ok := range readable(t, dir, all...) { // fails the test on wrong fingerprints
		if !ok {
			missing++
		}
	}
	if missing != 2 {
		t.Errorf("with two entries of the .idx swapped, %d versions not found, want 2 (the .idx is used)", missing)
	}
	for _, bad := range [][]byte{good[:len(good)-1], append(bytes.Clone(good[:len(good)-4]), 0, 0, 0, 0), encodeIdx(nil, 1<<40), []byte("IGSNPX01")} {
		if err := os.WriteFile(idxs[0], bad, 0o644); err != nil {
			t.Fatal(err)
		}
		for i, ok := range readable(t, dir, all...) {
			if !ok {
				t.Fatalf("with a damaged .idx (%d bytes), version %d not found", len(bad), i)
			}
		}
	}
}

// The .idx parser on any bytes: no panic, and every record it lists lies
// within the bytes it claims to cover, which lie within the pack.
func FuzzPackIdx(f *testing.F) {
	var sum [32]byte
	f.Add(encodeIdx([]idxEntry{{sum, 0, 3}, {sum, 76, 0}}, 128), int64(200))
	f.Add(encodeIdx(nil, 0), int64(0))
	f.Add([]byte("IGSNPX01"), int64(10))
	f.Fuzz(func(t *testing.T, b []byte, size int64) {
		covered := parseIdx(b, size, func(_ [32]byte, off int64, n int) {
			if off < 0 || n < 0 || n > maxLines {
				t.Fatalf("entry at %d of %d lines", off, n)
			}
		})
		if covered < 0 || covered > max(size, 0) {
			t.Fatalf("covers %d bytes of a %d byte pack", covered, size)
		}
		parseIdx(b, size, func(_ [32]byte, off int64, n int) {
			if off+int64(recordLen(n)) > covered {
				t.Fatalf("record at %d of %d lines past the %d bytes covered", off, n, covered)
			}
		})
	})
}

// The pack reader on any bytes: it never panics, never returns
// fingerprints that are not those of a whole record in the pack under that
// hash, and always finds a good record that comes first.
func FuzzPackReader(f *testing.F) {
	first := version(3, 1)
	f.Add(record(version(3, 2)))
	f.Add(slices.Concat(record(version(3, 2)), record(version(3, 3))))
	f.Add(record(version(3, 2))[:50])
	f.Add([]byte("IGSNPR01IGSNPR01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		pack := slices.Concat(record(first), b)
		seen := 0
		scanPack(bytes.NewReader(pack), 0, int64(len(pack)), func(sum [32]byte, off int64, n int) {
			seen++
			if off < 0 || off+int64(recordLen(n)) > int64(len(pack)) {
				t.Fatalf("record at %d of %d lines runs past %d bytes", off, n, len(pack))
			}
			fps, ok := parseRecord(pack[off:off+int64(recordLen(n))], &sum)
			if ok && !bytes.Equal(appendRecord(nil, &sum, fps), pack[off:off+int64(recordLen(n))]) {
				t.Fatalf("the record at %d reads as fingerprints that are not its bytes", off)
			}
		})
		if seen == 0 {
			t.Fatal("the first record was not found")
		}
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Dir(packPath(dir)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(packPath(dir), pack, 0o644); err != nil {
			t.Fatal(err)
		}
		if fps, ok := Read(dir, SHA256Hex(first)); !ok || !slices.Equal(fps, Fingerprints(SplitLines(first))) {
			t.Fatalf("the first record read as %x, %v", fps, ok)
		}
	})
}
