package iceberg

import (
	"strings"
	"testing"
)

// TestParseSchema: the schemas Iceberg writes, and hostile ones refused.
func TestParseSchema(t *testing.T) {
	ok := []string{
		manifestListSchema,
		manifestSchema,
		`"long"`,
		`["null","string"]`,
		`{"type":"int","logicalType":"date"}`,
		`{"type":"record","name":"a","namespace":"x.y","fields":[{"name":"b","type":{"type":"fixed","name":"f","size":16}},{"name":"c","type":"f"},{"name":"d","type":"x.y.f"}]}`,
		`{"type":"record","name":"node","fields":[{"name":"next","type":["null","node"]}]}`,
		`{"type":"enum","name":"e","symbols":["A","B"]}`,
		`{"type":"map","values":{"type":"array","items":"bytes"}}`,
	}
	for _, s := range ok {
		if _, err := parseSchema([]byte(s)); err != nil {
			t.Errorf("parseSchema(%.60s): %v", s, err)
		}
	}
	bad := map[string]string{
		"not JSON":              `{"type":`,
		"unknown type":          `"decimal128"`,
		"unknown named type":    `{"type":"record","name":"a","fields":[{"name":"b","type":"nothere"}]}`,
		"empty union":           `[]`,
		"record without fields": `{"type":"record","name":"a"}`,
		"record without a name": `{"type":"record","fields":[]}`,
		"a name defined twice":  `{"type":"record","name":"a","fields":[{"name":"b","type":{"type":"fixed","name":"a","size":1}}]}`,
		"field without a type":  `{"type":"record","name":"a","fields":[{"name":"b"}]}`,
		"negative fixed":        `{"type":"fixed","name":"f","size":-1}`,
		"fractional fixed":      `{"type":"fixed","name":"f","size":1.5}`,
		"enum without symbols":  `{"type":"enum","name":"e","symbols":[]}`,
		"array without items":   `{"type":"array"}`,
		"map without values":    `{"type":"map"}`,
		"a number":              `5`,
		"duplicate key":         `{"type":"array","items":"long","items":"string"}`,
		"nested too deep":       strings.Repeat(`{"type":"array","items":`, 100) + `"long"` + strings.Repeat(`}`, 100),
	}
	for name, s := range bad {
		if _, err := parseSchema([]byte(s)); err == nil {
			t.Errorf("%s: parseSchema(%.60s) = nil error", name, s)
		}
	}
}

// TestRecursiveValue: a value of a schema that holds itself stops at the depth limit.
func TestRecursiveValue(t *testing.T) {
	s, err := parseSchema([]byte(`{"type":"record","name":"node","fields":[{"name":"next","type":["null","node"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	deep := []byte(strings.Repeat("\x02", 200) + "\x00")
	w := walker{b: deep}
	if err := w.value(s, "", record{}, 0); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("value: %v, want the depth limit", err)
	}
	w = walker{b: []byte("\x02\x02\x00")}
	if err := w.value(s, "", record{}, 0); err != nil {
		t.Errorf("value of a short list: %v", err)
	}
}
