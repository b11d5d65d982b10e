package iceberg

import (
	"bytes"
	"testing"

	"github.com/hamba/avro/v2/ocf"
)

// FuzzAvro: no input makes the container reader panic or allocate past its limit.
func FuzzAvro(f *testing.F) {
	f.Add(manifestListBytes(f, ocf.Deflate, "s3://b/t/metadata/m.avro"))
	f.Add(manifestBytes(f, ocf.Snappy, entry{1, "s3://b/t/a.parquet", 0}))
	f.Add(manifestBytes(f, ocf.ZStandard, entry{1, "s3://b/t/a.parquet", 0}))
	f.Add([]byte("Obj\x01\x02\x16avro.schema\x02{\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := newOCF(bytes.NewReader(b), 1<<20)
		if err != nil {
			return
		}
		defer o.close()
		for i := 0; i < 10000; i++ {
			ok, err := o.next(newRecord(fieldStatus, fieldPath))
			if err != nil || !ok {
				return
			}
		}
	})
}

// FuzzMetadata: no input makes the metadata decoder panic.
func FuzzMetadata(f *testing.F) {
	f.Add(meta(f, loc, 1, 1, []snap{{id: 1, ms: 1, list: loc + "/metadata/snap-1.avro"}}, map[string]string{"delta-version": "3"}, nil))
	f.Add(gz([]byte(`{"format-version":2}`)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := decodeMetadata(b, 1<<20); err == nil {
			m.current()
		}
	})
}
