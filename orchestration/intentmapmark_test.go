package orchestration

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
)

// intentMapMarkTestEnv is a workspace whose map was updated after each of
// the golden records, with the ledger still open for more.
func intentMapMarkTestEnv(t *testing.T) (orch string, l *Ledger) {
	t.Helper()
	ledgerTestNeedsSharing(t)
	intents := intentMapTestIntents()
	orch = filepath.Join(t.TempDir(), ".orchestration")
	l, err := OpenLedger(filepath.Join(orch, LedgerName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for _, rec := range intentMapTestRecords(t)[:6] {
		line, err := l.AppendLine(rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := UpdateIntentMap(orch, intents, rec, line); err != nil {
			t.Fatal(err)
		}
	}
	return orch, l
}

// What an update's mark says, and how it stops saying it: a record appended
// since, other intents, intent_map.md changed by someone else.
func TestIntentMapShownAfterUpdate(t *testing.T) {
	orch, l := intentMapMarkTestEnv(t)
	intents := intentMapTestIntents()
	pos := l.Wrote()
	s := ReadIntentMapShown(orch, intents)
	if !s.Valid || !s.Current || !s.Whole || !s.Mine || !s.Covers(pos) {
		t.Fatalf("after an update: %+v, want valid, current, whole, mine, covering %+v", s, pos)
	}

	if _, err := l.AppendLine(intentMapTestRecords(t)[6]); err != nil {
		t.Fatal(err)
	}
	s = ReadIntentMapShown(orch, intents)
	if !s.Valid || !s.Current || s.Whole || !s.Covers(pos) || s.Covers(l.Wrote()) {
		t.Fatalf("after a record appended since: %+v, want it to cover %+v only, not %+v", s, pos, l.Wrote())
	}

	other := intentMapTestIntents()
	other[0].Name += " (renamed)"
	if s := ReadIntentMapShown(orch, other); !s.Valid || s.Current {
		t.Fatalf("with other intents: %+v, want valid and not current", s)
	}

	md := filepath.Join(orch, IntentMapName)
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	ledgerTestPut(t, md, b) // the same bytes, written again by someone
	if s := ReadIntentMapShown(orch, intents); !s.Valid || s.Current {
		t.Fatalf("with intent_map.md written by someone else: %+v, want valid and not current", s)
	}

	if err := UpdateIntentMap(orch, intents, nil, nil); err != nil {
		t.Fatal(err)
	}
	if s := ReadIntentMapShown(orch, intents); !s.Valid || !s.Current || !s.Whole || !s.Covers(l.Wrote()) {
		t.Fatalf("after the next update: %+v, want valid, current, whole", s)
	}
}

// A mark that does not describe this workspace's ledger as it is now is not
// believed: the process updates the map itself.
func TestIntentMapMarkDistrusted(t *testing.T) {
	other, err := cachedWorkspaceKey(t.TempDir()) // some other workspace's key
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		damage func(t *testing.T, orch string, mark []byte, key []byte)
	}{
		{"good mark (control)", nil},
		{"empty", func(t *testing.T, orch string, _, _ []byte) {
			ledgerTestPut(t, filepath.Join(orch, IntentMapLockName), nil)
		}},
		{"garbage", func(t *testing.T, orch string, _, _ []byte) {
			ledgerTestPut(t, filepath.Join(orch, IntentMapLockName), bytes.Repeat([]byte{0x5a}, intentMapMarkSize))
		}},
		{"torn", func(t *testing.T, orch string, mark, _ []byte) {
			ledgerTestPut(t, filepath.Join(orch, IntentMapLockName), mark[:intentMapMarkSize-1])
		}},
		{"one bit flipped in the offset", func(t *testing.T, orch string, mark, _ []byte) {
			m := bytes.Clone(mark)
			m[24] ^= 1
			ledgerTestPut(t, filepath.Join(orch, IntentMapLockName), m)
		}},
		{"another workspace's key, offset far beyond", func(t *testing.T, orch string, mark, key []byte) {
			m, _ := parseIntentMapMark(mark, key)
			m.line.end += 1 << 20
			ledgerTestPut(t, filepath.Join(orch, IntentMapLockName), m.encode(other))
		}},
		{"right key, another inode", func(t *testing.T, orch string, mark, key []byte) {
			m, _ := parseIntentMapMark(mark, key)
			m.line.ino++
			ledgerTestPut(t, filepath.Join(orch, IntentMapLockName), m.encode(key))
		}},
		{"right key, a line that is not there", func(t *testing.T, orch string, mark, key []byte) {
			m, _ := parseIntentMapMark(mark, key)
			m.line.sum[3] ^= 1
			ledgerTestPut(t, filepath.Join(orch, IntentMapLockName), m.encode(key))
		}},
		{"right key, offset past the end of the file", func(t *testing.T, orch string, mark, key []byte) {
			m, _ := parseIntentMapMark(mark, key)
			m.line.end += 1 << 20
			ledgerTestPut(t, filepath.Join(orch, IntentMapLockName), m.encode(key))
		}},
		{"the ledger replaced by a copy", func(t *testing.T, orch string, _, _ []byte) {
			p := filepath.Join(orch, LedgerName)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(p)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"the ledger rewritten in place with its first lines only", func(t *testing.T, orch string, _, _ []byte) {
			p := filepath.Join(orch, LedgerName)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitAfter(b, []byte("\n"))
			ledgerTestPut(t, p, bytes.Join(lines[:3], nil))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			orch, _ := intentMapMarkTestEnv(t)
			key, err := cachedWorkspaceKey(filepath.Dir(orch))
			if err != nil {
				t.Fatal(err)
			}
			mark, err := os.ReadFile(filepath.Join(orch, IntentMapLockName))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := parseIntentMapMark(mark, key); !ok {
				t.Fatalf("the update left no mark that parses: %q", mark)
			}
			if tc.damage != nil {
				tc.damage(t, orch, mark, key)
			}
			s := ReadIntentMapShown(orch, intentMapTestIntents())
			if s.Valid != (tc.damage == nil) {
				t.Fatalf("ReadIntentMapShown = %+v, want valid %v", s, tc.damage == nil)
			}
		})
	}
}

func FuzzIntentMapMark(f *testing.F) {
	key := bytes.Repeat([]byte{9}, 32)
	line := []byte(`{"id":"x"}`)
	good := intentMapMark{line: ledgerSyncMark{dev: 1, ino: 2, end: int64(len(line)) + 1, size: int64(len(line)) + 1, sum: sha256.Sum256(line)},
		at: 1e18, by: 3, intents: sha256.Sum256(nil)}
	f.Add(good.encode(key))
	f.Add(intentMapMarkMagic)
	f.Add(bytes.Repeat([]byte{0xff}, intentMapMarkSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, ok := parseIntentMapMark(b, key)
		if ok && !bytes.Equal(m.encode(key), b[:intentMapMarkSize]) {
			t.Fatalf("accepted a mark that is not what its fields encode to")
		}
		if ok && (m.line.size <= 0 || m.line.size > m.line.end) {
			t.Fatalf("accepted a line of %d bytes ending at %d", m.line.size, m.line.end)
		}
	})
}
