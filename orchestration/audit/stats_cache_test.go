package audit

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
)

// TestStatsCacheMatchesFullCount holds `trace stats` with its cache to the
// plain count of every line (statsByEntries), through what happens to a
// ledger and its cache: damaged ledgers with other writers' lines,
// appends after the cache was written (whole lines, a torn tail, then its
// end), the ledger truncated or rewritten under the cache, the cache
// damaged, forged, or copied from another workspace. Each step also says
// whether the cache was used, so the test shows it is, where it may be.
func TestStatsCacheMatchesFullCount(t *testing.T) {
	ws, ledger := testWorkspace(t, 60)
	lines := readLines(t, ledger)
	extra := statsExtraLines(t)
	cachePath := filepath.Join(ws, ".orchestration", IndexDirName, statsCacheName)
	r := rand.New(rand.NewPCG(5, 6))
	round := 0
	check := func(step, want string) {
		t.Helper()
		chunk := []int{0, 64, 700, 1 << 20}[r.IntN(4)]
		got, how, err := countStats(ws, ledger, chunk, nil)
		if err != nil {
			t.Fatalf("round %d, %s: %v", round, step, err)
		}
		if w := statsByEntries(t, ledger); !reflect.DeepEqual(got, w) {
			g, _ := json.MarshalIndent(got, "", " ")
			wj, _ := json.MarshalIndent(w, "", " ")
			t.Fatalf("round %d, %s (%s): stats differ:\n got %s\nwant %s", round, step, how, g, wj)
		}
		if want != "" && how != want {
			t.Fatalf("round %d, %s: counted %q, want %q", round, step, how, want)
		}
	}
	appendTo := func(b []byte) {
		t.Helper()
		f, err := os.OpenFile(ledger, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	pick := func() []byte {
		if r.IntN(3) == 0 {
			return extra[r.IntN(len(extra))]
		}
		return lines[r.IntN(len(lines))]
	}
	for round = range 30 {
		mut := mutateLedger(t, r, lines)
		for _, e := range extra {
			at := r.IntN(len(mut) + 1)
			mut = append(mut[:at], append([][]byte{e}, mut[at:]...)...)
		}
		writeLines(t, ledger, mut)
		check("rewritten", "") // whole or, when by chance the cached prefix still holds, extended
		check("again", "cached")

		var add []byte
		for range 1 + r.IntN(5) {
			add = append(add, pick()...)
		}
		appendTo(add)
		check("appended", "extended")
		line := pick()
		cut := r.IntN(len(line) - 1)
		appendTo(line[:cut]) // an append in progress
		check("torn tail", "cached")
		appendTo(line[cut:])
		check("tail completed", "extended")

		now := readLines(t, ledger)
		switch round % 7 {
		case 0: // truncated to an earlier line
			writeLines(t, ledger, now[:len(now)-1-r.IntN(3)])
		case 1: // truncated, then grown past the cached end by other lines
			now = now[:len(now)-1-r.IntN(3)]
			for range 6 {
				now = append(now, extra[r.IntN(len(extra))])
			}
			writeLines(t, ledger, now)
		case 2: // the last line rewritten, same length
			last := bytes.Clone(now[len(now)-1])
			i := r.IntN(len(last) - 1)
			last[i] ^= 0x01
			now[len(now)-1] = last
			writeLines(t, ledger, now)
		case 3: // the cache damaged: a byte flipped, or cut short
			b, err := os.ReadFile(cachePath)
			if err != nil {
				t.Fatal(err)
			}
			if r.IntN(2) == 0 {
				b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
			} else {
				b = b[:r.IntN(len(b))]
			}
			if err := os.WriteFile(cachePath, b, 0o644); err != nil {
				t.Fatal(err)
			}
		case 4: // a forged cache: other counts, authenticated with a key of the forger's
			forgeStatsCache(t, cachePath, ws, ledger, []byte("not the workspace's key, 32 byte"))
		case 5: // the right key, but made for another ledger
			other := filepath.Join(ws, ".orchestration", "other.jsonl")
			forgeStatsCacheFor(t, cachePath, ws, other)
		case 6: // the workspace copied elsewhere with its cache: another key
			ws2 := t.TempDir()
			if err := os.CopyFS(ws2, os.DirFS(ws)); err != nil {
				t.Fatal(err)
			}
			ws, ledger = ws2, filepath.Join(ws2, ".orchestration", orchestration.LedgerName)
			cachePath = filepath.Join(ws, ".orchestration", IndexDirName, statsCacheName)
			if _, err := os.Stat(cachePath); err != nil {
				t.Fatal(err)
			}
		}
		check("under the cache", "full")
		check("again", "cached")
	}
}

// forgeStatsCache replaces the cache by one that says every row has a
// thousand more records, authenticated under key.
func forgeStatsCache(t *testing.T, path, ws, ledger string, key []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, st, err := decodeStatsCache(b[len(statsCacheMagic)+statsMACLen:])
	if err != nil {
		t.Fatal(err)
	}
	st.lines += 1000
	st.records += 1000
	for _, tab := range st.tabs {
		for _, r := range tab {
			r.records += 1000
			r.changes += 1000
			break
		}
	}
	body := encodeStatsCache(k, st)
	if _, _, err := decodeStatsCache(body); err != nil {
		t.Fatalf("the forged body does not decode: %v", err)
	}
	abs, _ := filepath.Abs(ledger)
	out := append(append([]byte(statsCacheMagic), statsCacheMAC(key, abs, body)...), body...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// forgeStatsCacheFor re-authenticates the cache, with the workspace's key,
// as a count of another ledger.
func forgeStatsCacheFor(t *testing.T, path, ws, ledger string) {
	t.Helper()
	key, err := orchestration.WorkspaceKey(ws)
	if err != nil {
		t.Fatal(err)
	}
	forgeStatsCache(t, path, ws, ledger, key)
}

// TestStatsCacheForgedWithTheKeyIsUsed is the other side of the forgery
// test: a cache authenticated with the workspace's key is what the count
// rests on, so the key (outside the workspace) is what must be guarded.
func TestStatsCacheForgedWithTheKeyIsUsed(t *testing.T) {
	ws, ledger := testWorkspace(t, 10)
	if _, how, err := countStats(ws, ledger, 0, nil); err != nil || how != "full" {
		t.Fatalf("first count: %q, %v", how, err)
	}
	key, err := orchestration.WorkspaceKey(ws)
	if err != nil {
		t.Fatal(err)
	}
	cachePath := filepath.Join(ws, ".orchestration", IndexDirName, statsCacheName)
	forgeStatsCache(t, cachePath, ws, ledger, key)
	got, how, err := countStats(ws, ledger, 0, nil)
	if err != nil || how != "cached" || got.Records != 10+1000 {
		t.Fatalf("count with a cache under the right key: %q, %d records, %v; want cached, 1010", how, got.Records, err)
	}
}

func FuzzStatsCache(f *testing.F) {
	_, ledger := testWorkspace(f, 30)
	lines := append(readLines(f, ledger), statsExtraLines(f)...)
	writeLines(f, ledger, lines)
	st := newStatState()
	end, _, err := st.count(ledger, 0, 0, nil)
	if err != nil {
		f.Fatal(err)
	}
	fh, err := os.Open(ledger)
	if err != nil {
		f.Fatal(err)
	}
	k, ok := tailOf(fh, end)
	fh.Close()
	if !ok {
		f.Fatal("no key")
	}
	body := encodeStatsCache(k, st)
	f.Add(body)
	f.Add(encodeStatsCache(statsKey{}, newStatState()))
	f.Add(body[:len(body)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		k, st, err := decodeStatsCache(b)
		if err != nil {
			return
		}
		again := encodeStatsCache(k, st)
		k2, st2, err := decodeStatsCache(again)
		if err != nil {
			t.Fatalf("a decoded cache encodes to one that does not decode: %v", err)
		}
		if k2 != k || !statsStateEqual(st, st2) || !bytes.Equal(encodeStatsCache(k2, st2), again) {
			t.Fatal("decode, encode, decode changed the count")
		}
		// What stats would print from it is well formed.
		s := st.stats()
		if s.Records+s.Unparsable != s.Lines {
			t.Fatalf("lines %d != records %d + unparsable %d", s.Lines, s.Records, s.Unparsable)
		}
	})
}

// statsStateEqual reports whether two states count the same (tests).
func statsStateEqual(a, b *statState) bool {
	if a.lines != b.lines || a.records != b.records || a.unpars != b.unpars || !slices.Equal(a.paths, b.paths) {
		return false
	}
	for i := range a.tabs {
		if len(a.tabs[i]) != len(b.tabs[i]) {
			return false
		}
		for k, x := range a.tabs[i] {
			y := b.tabs[i][k]
			if y == nil || x.records != y.records || x.changes != y.changes || x.linesAdded != y.linesAdded ||
				x.violations != y.violations || x.denials != y.denials || len(x.codes) != len(y.codes) {
				return false
			}
			for c, n := range x.codes {
				if y.codes[c] != n {
					return false
				}
			}
			fx, fy := bytes.TrimRight(u64bytes(x.files), "\x00"), bytes.TrimRight(u64bytes(y.files), "\x00")
			if !bytes.Equal(fx, fy) {
				return false
			}
		}
	}
	return true
}

func u64bytes(ws []uint64) []byte {
	b := make([]byte, 0, 8*len(ws))
	for _, w := range ws {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

// TestStatsCacheNotThroughSymlink: a kept count reached through a symlink
// (one an agent's command could plant to point at a device or a file of its
// own) is not read; the ledger is counted in full.
func TestStatsCacheNotThroughSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	ws, ledger := testWorkspace(t, 10)
	if _, how, err := countStats(ws, ledger, 0, nil); err != nil || how != "full" {
		t.Fatalf("first count: %q, %v", how, err)
	}
	cachePath := filepath.Join(ws, ".orchestration", IndexDirName, statsCacheName)
	elsewhere := filepath.Join(t.TempDir(), "stats.bin")
	b, err := os.ReadFile(cachePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(elsewhere, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{elsewhere, os.DevNull} {
		os.Remove(cachePath)
		if err := os.Symlink(target, cachePath); err != nil {
			t.Fatal(err)
		}
		if got, how, err := countStats(ws, ledger, 0, nil); err != nil || how != "full" || got.Records != 10 {
			t.Fatalf("count with the cache a symlink to %s: %q, %v", target, how, err)
		}
		// The count kept again is a file of its own.
		if fi, err := os.Lstat(cachePath); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("after the count the cache is %v, %v; want a regular file", fi, err)
		}
	}
}
