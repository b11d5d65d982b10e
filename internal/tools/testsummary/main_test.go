package main

import (
	"bytes"
	"strings"
	"testing"
)

const stream = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestPass"}
{"Action":"output","Package":"p","Test":"TestPass","Output":"=== RUN   TestPass\n"}
{"Action":"output","Package":"p","Test":"TestPass","Output":"--- PASS: TestPass (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestPass"}
{"Action":"run","Package":"p","Test":"TestFix"}
{"Action":"output","Package":"p","Test":"TestFix","Output":"=== RUN   TestFix\n"}
{"Action":"output","Package":"p","Test":"TestFix","Output":"    a_test.go:12: Delta table fixtures not found at /x\n"}
{"Action":"output","Package":"p","Test":"TestFix","Output":"--- SKIP: TestFix (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestFix"}
{"Action":"output","Package":"q","Test":"TestFix2","Output":"    b_test.go:40: Delta table fixtures not found at /x\n"}
{"Action":"skip","Package":"q","Test":"TestFix2"}
{"Action":"output","Package":"q","Test":"TestS3","Output":"    s3_test.go:9: no S3 test server\n"}
{"Action":"skip","Package":"q","Test":"TestS3"}
{"Action":"output","Package":"q","Test":"TestBad","Output":"    c_test.go:3: got 1, want 2\n"}
{"Action":"output","Package":"q","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"q","Test":"TestBad"}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.01s\n"}
{"Action":"pass","Package":"p"}
{"Action":"output","Package":"q","Output":"FAIL\tq\t0.02s\n"}
{"Action":"fail","Package":"q"}
`

func TestReadableOutputAndSkipsByReason(t *testing.T) {
	s := newSummary()
	var out bytes.Buffer
	s.read(strings.NewReader(stream), &out)
	want := "    c_test.go:3: got 1, want 2\n--- FAIL: TestBad (0.00s)\nok  \tp\t0.01s\nFAIL\tq\t0.02s\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	var sum bytes.Buffer
	s.print(&sum)
	for _, w := range []string{
		"Skipped: 3 tests, by reason:\n    2  Delta table fixtures not found at /x\n       TestFix (p), TestFix2 (q)\n",
		"    1  no S3 test server\n",
		"\n1 passed, 1 failed, 3 skipped\n",
	} {
		if !strings.Contains(sum.String(), w) {
			t.Errorf("summary lacks %q:\n%s", w, sum.String())
		}
	}
}
