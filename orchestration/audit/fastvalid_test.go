package audit

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/intentgate/intentgate/orchestration"
)

// The fast validator only ever agrees with the schema: every line it accepts
// the schema accepts, and lines that break a constraint the writer does not
// check are left to the schema.
func TestOwnRecordValidAgreesWithSchema(t *testing.T) {
	_, ledger := testWorkspace(t, 20)
	accepted := 0
	for i, raw := range readLines(t, ledger) {
		raw = bytes.TrimSuffix(raw, []byte("\n"))
		rec, err := orchestration.ParseRecord(raw)
		if err != nil {
			t.Fatal(err)
		}
		if ownRecordValid(raw, rec) {
			accepted++
			if _, err := ValidateLine(raw, rec); err != nil {
				t.Errorf("line %d: fast validator accepts what the schema rejects: %v", i+1, err)
			}
		}
	}
	if accepted == 0 {
		t.Fatal("the fast validator accepted none of intentgate's own records")
	}
	base := bytes.TrimSuffix(readLines(t, ledger)[0], []byte("\n"))
	for name, bad := range map[string][]byte{
		"start_line 0":      bytes.Replace(base, []byte(`"start_line":1`), []byte(`"start_line":0`), 1),
		"contributor type":  bytes.Replace(base, []byte(`"type":"ai"`), []byte(`"type":"robot"`), 1),
		"uppercase-free id": bytes.Replace(base, []byte(`"id":"`), []byte(`"id":"{`), 1),
		"other tool":        bytes.Replace(base, []byte(`"name":"intentgate"`), []byte(`"name":"other"`), 1),
		"extra space":       bytes.Replace(base, []byte(`"files":`), []byte(`"files": `), 1),
	} {
		if bytes.Equal(bad, base) {
			t.Fatalf("%s: nothing changed", name)
		}
		rec, err := orchestration.ParseRecord(bad)
		if err != nil {
			continue // refused earlier still
		}
		if ownRecordValid(bad, rec) {
			t.Errorf("%s: the fast validator accepted it", name)
		}
	}
}

// Every line intentgate writes is read by the fast path, and there the
// value checks alone agree with the full fast validator.
func TestCanonicalLinesTakeTheFastPath(t *testing.T) {
	_, ledger := testWorkspace(t, 20)
	for i, raw := range readLines(t, ledger) {
		raw = bytes.TrimSuffix(raw, []byte("\n"))
		rec, ok := orchestration.ParseCanonical(raw)
		if !ok {
			t.Fatalf("line %d: intentgate's own line is not read fast: %s", i+1, raw)
		}
		if ownRecordValues(rec) != ownRecordValid(raw, rec) {
			t.Errorf("line %d: value checks and round trip disagree", i+1)
		}
	}
}

func FuzzIDForm(f *testing.F) {
	f.Add("0195f3c2-7b1a-7c3d-8e4f-0123456789ab")
	f.Add("0195F3C2-7B1A-9C3D-BE4F-0123456789AB")
	f.Add("0195f3c2-7b1a-0c3d-8e4f-0123456789ab")
	f.Fuzz(func(t *testing.T, id string) {
		if idForm(id) != idPattern.MatchString(id) {
			t.Fatalf("idForm(%q) = %v, the pattern says otherwise", id, idForm(id))
		}
	})
}

var idPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`)
