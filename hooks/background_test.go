package hooks

import (
	"sync"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
)

type seenContents struct {
	mu  sync.Mutex
	got []string
}

func (s *seenContents) Recorded(*orchestration.Record, []byte) error { return nil }

func (s *seenContents) RecordedContent(_ *orchestration.Record, _, after []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, string(after))
	return nil
}

// The queued changes are recorded in order, every one by the time Close
// returns, and a change after Close is recorded at once.
func TestBackgroundRecordsEveryChangeInOrder(t *testing.T) {
	s := &seenContents{}
	b := NewBackground(s, 2)
	want := []string{}
	for i := range 50 {
		c := string(rune('a' + i%26))
		want = append(want, c)
		if err := b.RecordedContent(&orchestration.Record{}, nil, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	b.Close()
	if err := b.RecordedContent(&orchestration.Record{}, nil, []byte("late")); err != nil {
		t.Fatal(err)
	}
	want = append(want, "late")
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.got) != len(want) {
		t.Fatalf("%d changes recorded, want %d", len(s.got), len(want))
	}
	for i := range want {
		if s.got[i] != want[i] {
			t.Fatalf("change %d recorded as %q, want %q", i, s.got[i], want[i])
		}
	}
}
