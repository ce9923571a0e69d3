package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// hostileStatLines are lines made from base (a record of intentgate's
// writer for INT-001 on src/f0.go, without its newline) that a reader of
// the writer's shape must not read as the writer's: each is either another
// record to the full decoder than it looks, or no record at all. The
// comment on each says what encoding/json makes of it.
func hostileStatLines(t testing.TB, base string) map[string]string {
	t.Helper()
	swap := func(old, new string) string {
		t.Helper()
		if !strings.Contains(base, old) {
			t.Fatalf("base line has no %s: %s", old, base)
		}
		return strings.Replace(base, old, new, 1)
	}
	return map[string]string{
		// the last of two keys wins: intent INT-666
		"duplicate key": swap(`"intent":"INT-001"`, `"intent":"INT-001","intent":"INT-666"`),
		// keys match without regard to case: intent INT-888
		"key in another case": swap(`"intent":"INT-001"`, `"intent":"INT-001","Intent":"INT-888"`),
		// an escape: intent INT-001, the same row
		"escaped intent": swap(`"intent":"INT-001"`, `"intent":"INT\u002d001"`),
		// a key inside a string: the path is src/a","intent":"INT-777, the intent INT-001
		"key inside a string": swap(`"path":"src/f0.go"`, `"path":"src/a\",\"intent\":\"INT-777"`),
		// whitespace between tokens: the same record
		"whitespace": swap(`{"version"`, `{ "version"`),
		// a carriage return before the newline: the same record
		"crlf": base + "\r",
		// invalid UTF-8 in a path: the path with U+FFFD
		"invalid utf-8": swap(`"path":"src/f0.go"`, "\"path\":\"src/\xff.go\""),
		// U+2028 unescaped: a valid path
		"line separator": swap(`"path":"src/f0.go"`, "\"path\":\"src/\u2028.go\""),
		// a control character in a string: not JSON
		"raw tab": swap(`"path":"src/f0.go"`, "\"path\":\"src/\t.go\""),
		// the line cut in half: not JSON
		"cut": base[:len(base)/2],
		// bytes after the object: not JSON
		"trailing": base + `x`,
		// a range that ends before it starts: refused by ParseRecord
		"bad range": swap(`"end_line":2`, `"end_line":0`),
		// a path of 600 KiB, longer than two of the count's chunks: valid
		"huge line": swap(`"path":"src/f0.go"`, `"path":"src/`+strings.Repeat("h", 600<<10)+`.go"`),
		// a number where the intent goes: not a record
		"number intent": swap(`"intent":"INT-001"`, `"intent":1`),
		// an escaped quote where a 40-byte revision would end (the reader
		// checks that length first): a revision of 41 bytes, the same record
		"revision's end escaped": swap(`"revision":"`+strings.Repeat("ab", 20)+`"`, `"revision":"`+strings.Repeat("a", 39)+`\"b"`),
		// a two-byte character in the last word of a hash of the usual
		// length: valid, the same record
		"hash's last word not ASCII": func() string {
			at := strings.Index(base, `"content_hash":"`) + len(`"content_hash":"`)
			return base[:at+69] + "\u00e9" + base[at+71:]
		}(),
		// a control character as the last byte of a 71-byte prev: not JSON
		"prev's last byte raw": swap(`"prev":""`, `"prev":"sha256:`+strings.Repeat("0", 63)+"\x01\""),
	}
}

// TestStatsHostileLines holds the count to the full decoder (ParseRecord
// and EntryOf, line by line) on a ledger of intentgate's records with
// hostile lines among them, read in chunks of every size the count meets
// (the default, a chunk smaller than a line, and a chunk larger than the
// ledger), with and without a torn tail. It also checks by hand what the
// decoder makes of the hostile lines, so that the comparison is with the
// right answer and not only with itself.
func TestStatsHostileLines(t *testing.T) {
	ws, ledger := testWorkspace(t, 20)
	lines := readLines(t, ledger)
	base := strings.TrimSuffix(string(lines[0]), "\n")
	hostile := hostileStatLines(t, base)
	var mixed [][]byte
	for i, l := range lines {
		mixed = append(mixed, l)
		if i == 3 {
			for _, h := range hostile {
				mixed = append(mixed, []byte(h+"\n"))
			}
		}
	}
	for _, torn := range []string{"", `{"version":"0.1.0","id":"`} {
		writeLines(t, ledger, append(mixed, []byte(torn)))
		want := statsByEntries(t, ledger)
		for _, chunk := range []int{0, 64, 700, 1 << 26} {
			got, how, err := countStats(ws, ledger, chunk, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Fatalf("chunk %d (%s, torn %q): stats differ:\n got %s\nwant %s", chunk, how, torn, g, w)
			}
			removeStatsCache(t, ws)
		}
		// What the decoder makes of them, by hand: 20 records of ours, 11
		// hostile lines that are records, 6 that are not.
		if want.Lines != 20+len(hostile) || want.Records != 31 || want.Unparsable != 6 {
			t.Fatalf("lines %d, records %d, unparsable %d; want %d, 31, 6", want.Lines, want.Records, want.Unparsable, 20+len(hostile))
		}
		rows := map[string]int{}
		for _, r := range want.ByIntent {
			rows[r.Key] = r.Records
		}
		// base's intent: its 10 records, plus the escaped one, the key
		// inside a string, whitespace, crlf, the three paths, the huge line,
		// the revision and the hash
		if rows["INT-666"] != 1 || rows["INT-888"] != 1 || rows["INT-777"] != 0 || rows["INT-001"] != 10+9 {
			t.Fatalf("rows by intent: %v", rows)
		}
	}
}

func removeStatsCache(t testing.TB, ws string) {
	t.Helper()
	p := filepath.Join(ws, ".orchestration", IndexDirName, statsCacheName)
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// statsByWorker counts lines (without their newlines) as a full count
// does: one worker, its tables added to an empty count.
func statsByWorker(lines [][]byte) *Stats {
	w := newStatWorker()
	for _, l := range lines {
		w.lines++
		if w.line(l) {
			w.records++
		} else {
			w.unpars++
		}
	}
	w.flush()
	s := newStatState()
	s.addWorker(&w)
	return s.stats()
}

// FuzzStatsLine holds the count of a line (intentgate's records read in
// place by CanonView, any other line by ParseRecord) to the full decoder,
// with a record of intentgate's before it so that the rows it adds to are
// not empty. Seeds: intentgate's records, refusals, and the hostile lines.
func FuzzStatsLine(f *testing.F) {
	_, ledger := testWorkspace(f, 5)
	lines := readLines(f, ledger)
	first := bytes.TrimSuffix(lines[0], []byte{'\n'})
	for _, l := range lines {
		f.Add(bytes.TrimSuffix(l, []byte{'\n'}))
	}
	for _, h := range hostileStatLines(f, string(first)) {
		if len(h) < 4096 {
			f.Add([]byte(h))
		}
	}
	for _, e := range statsExtraLines(f) {
		f.Add(bytes.TrimSuffix(e, []byte{'\n'}))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return // one line
		}
		in := [][]byte{first, trimCR(line)}
		if got, want := statsByWorker(in), statsByLines(in); !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Fatalf("line %q:\n got %s\nwant %s", line, g, w)
		}
	})
}
