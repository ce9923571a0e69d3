package audit

import (
	"bytes"
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
