package store

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/google/go-cmp/cmp"
)

// fullRecord sets every field of an audit record, by reflection, so that a
// field added to core.AuditRecord and forgotten by appendRecord fails the
// tests below.
func fullRecord(s string) *core.AuditRecord {
	r := &core.AuditRecord{}
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(s + "-" + v.Type().Field(i).Name)
		case reflect.Int64:
			f.SetInt(int64(1000 + i))
		}
	}
	r.Time = time.Date(2026, 11, 26, 5, 3, 33, 190617911, time.UTC)
	return r
}

func TestAppendRecordMatchesEncodingJSON(t *testing.T) {
	tests := []struct {
		name string
		rec  *core.AuditRecord
	}{
		{"every field set", fullRecord("x")},
		{"escapes and odd text", fullRecord("quote \" backslash \\ newline \n tab \t ctl \x01 <html> & \u2028\u2029 bad utf8 \xff\xfe é 🙂")},
		{"empty fields left out", &core.AuditRecord{ID: 1, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(tt.rec)
			if err != nil {
				t.Fatal(err)
			}
			got := appendRecord(nil, tt.rec)
			if diff := cmp.Diff(string(want)+"\n", string(got)); diff != "" {
				t.Errorf("appendRecord (-encoding/json +appendRecord):\n%s", diff)
			}
		})
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\\n\r\t\x00\x1f", "<>&", "\u2028\u2029", "\xff", "é\xc3", "🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, encoding/json says %s", s, got, want)
		}
	})
}

func BenchmarkAppendRecord(b *testing.B) {
	r := fullRecord("bench")
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = appendRecord(buf[:0], r)
	}
}
