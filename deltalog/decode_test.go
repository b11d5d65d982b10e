package deltalog

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// FuzzReadJSONActions checks the strict commit decoder against an oracle built on other code:
// encoding/json's tokenizer (which is lenient, but reports names and strings as written) and
// a scan of the raw bytes. Whenever readJSONActions accepts a file, every line must be valid
// UTF-8 without lone surrogate escapes, one JSON object without duplicate names at any depth,
// with at most one protocol action whose value is an object, and the path and
// deletionTimestamp decoded must be the ones written under exactly those names. A refusal
// must wrap ErrCorrupt.
func FuzzReadJSONActions(f *testing.F) {
	for _, tc := range hostileLines {
		f.Add([]byte(tc.line + "\n"))
	}
	f.Add([]byte(`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" + `{"metaData":{"id":"m","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{}}}` + "\n"))
	f.Add([]byte(`{"commitInfo":{"timestamp":1,"operation":"WRITE"}}` + "\r\n\n" + `{"cdc":{"path":"_change_data/c.parquet","size":1,"dataChange":false}}`))
	if dir, err := pqFixturesPath(); err == nil {
		for _, rel := range []string{
			"delta/transaction_log_schema_evolvability/_delta_log/00000000000000000005.json",
			"delta/dv-partitioned-with-checkpoint/_delta_log/00000000000000000011.json",
			"delta-kernel-rs/cdf-table/_delta_log/00000000000000000001.json",
			"delta/v2-checkpoint-json/_delta_log/00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json",
		} {
			if b, err := os.ReadFile(filepath.Join(dir, rel)); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		store := mem.New("mem://fuzz")
		key := CommitKey(1)
		store.PutAt(key, data, time.Unix(0, 0))
		var acts []*Action
		err := readJSONActions(context.Background(), store, key, func(a *Action) error {
			acts = append(acts, a)
			return nil
		})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		i := 0
		for _, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.Trim(line, " \t\r\n")
			if len(line) == 0 {
				continue
			}
			if i >= len(acts) {
				t.Fatalf("%d actions for more lines", len(acts))
			}
			if err := oracleLine(line, acts[i]); err != nil {
				t.Fatalf("accepted line %q as %s: %v", line, pqJSON(acts[i]), err)
			}
			i++
		}
		if i != len(acts) {
			t.Fatalf("%d actions for %d lines", len(acts), i)
		}
	})
}

// oracleLine checks one accepted line against what an exact reading of it must give.
func oracleLine(line []byte, a *Action) error {
	if !utf8.Valid(line) {
		return errors.New("invalid UTF-8 accepted")
	}
	if err := checkSurrogates(line); err != nil {
		return err
	}
	dec := stdjson.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	top, err := parseNode(dec, "")
	if err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err == nil {
		return errors.New("more than one JSON value accepted")
	}
	if top.kind != '{' {
		return errors.New("not an object")
	}
	var action string
	var value *node
	for k, name := range top.keys {
		if protocolActions[name] {
			if action != "" {
				return fmt.Errorf("two actions %s and %s accepted", action, name)
			}
			action, value = name, top.vals[k]
		}
	}
	if action != "" && value.kind != '{' {
		return fmt.Errorf("%s is not an object", action)
	}
	kinds := map[string]Kinds{"add": KindAdd, "remove": KindRemove, "cdc": KindCDC, "metaData": KindMetadata,
		"protocol": KindProtocol, "sidecar": KindSidecar, "checkpointMetadata": KindCheckpointMetadata, "commitInfo": KindCommitInfo}
	if got, want := a.kind(), kinds[action]; got != want {
		return fmt.Errorf("decoded as kind %d, want %d (%q)", got, want, action)
	}
	var path string
	switch {
	case a.Add != nil:
		path = a.Add.Path
	case a.Remove != nil:
		path = a.Remove.Path
		want := value.get("deletionTimestamp")
		got := a.Remove.DeletionTimestamp
		switch {
		case want == nil || want.kind == 'n':
			if got != nil {
				return fmt.Errorf("deletionTimestamp %d, want none", *got)
			}
		case got == nil || want.str != strconv.FormatInt(*got, 10):
			return fmt.Errorf("deletionTimestamp decoded as %v, written %s", got, want.str)
		}
	case a.CDC != nil:
		path = a.CDC.Path
	case a.Sidecar != nil:
		path = a.Sidecar.Path
	default:
		return nil
	}
	if want := value.get("path"); want == nil || want.kind != '"' || want.str != path {
		return fmt.Errorf("path decoded as %q, written %+v", path, want)
	}
	return nil
}

// node is a JSON value as encoding/json's tokenizer reads it, names kept in order.
type node struct {
	kind  byte // '{', '[', '"', '0' (number), 'b' (bool), 'n' (null)
	str   string
	keys  []string
	vals  []*node
	elems []*node
}

func (n *node) get(name string) *node {
	for i, k := range n.keys {
		if k == name {
			return n.vals[i]
		}
	}
	return nil
}

// parseNode reads one value and refuses duplicate names (exact) in any object.
func parseNode(dec *stdjson.Decoder, where string) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case stdjson.Delim:
		switch v {
		case '{':
			n := &node{kind: '{', keys: []string{}}
			seen := map[string]bool{}
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				name := tok.(string)
				if seen[name] {
					return nil, fmt.Errorf("duplicate name %q in %s", name, where)
				}
				seen[name] = true
				val, err := parseNode(dec, where+"/"+name)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, name), append(n.vals, val)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: '['}
			for dec.More() {
				val, err := parseNode(dec, where+"/[]")
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, val)
			}
			_, err := dec.Token()
			return n, err
		}
	case string:
		return &node{kind: '"', str: v}, nil
	case stdjson.Number:
		return &node{kind: '0', str: v.String()}, nil
	case bool:
		return &node{kind: 'b'}, nil
	case nil:
		return &node{kind: 'n'}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// checkSurrogates refuses a \u escape of a surrogate that is not half of a pair. In valid JSON
// a backslash appears only inside strings, so the raw bytes can be scanned.
func checkSurrogates(b []byte) error {
	hex := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 32)
		return rune(v), err == nil
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := hex(i)
		if !ok {
			i++ // skip the escaped character
			continue
		}
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return fmt.Errorf("lone low surrogate accepted at %d", i)
		case r >= 0xd800 && r <= 0xdbff:
			low, ok := hex(i + 6)
			if !ok || low < 0xdc00 || low > 0xdfff {
				return fmt.Errorf("lone high surrogate accepted at %d", i)
			}
			i += 11
		default:
			i += 5
		}
	}
	return nil
}

func TestOracleCatchesLenientDecoding(t *testing.T) {
	// The oracle itself must see what the strict decoder refuses, or the fuzz target proves
	// nothing: feed it what encoding/json would have decoded.
	for _, tc := range []struct {
		line string
		a    *Action
	}{
		{`{"REMOVE":{"path":"a"}}`, &Action{Remove: &Remove{Path: "a"}}},
		{`{"add":{"path":"a","Path":"b"}}`, &Action{Add: &Add{Path: "b"}}},
		{`{"add":{"path":"a","path":"b"}}`, &Action{Add: &Add{Path: "b"}}},
		{`{"add":{"path":"a\ud800"}}`, &Action{Add: &Add{Path: "a\uFFFD"}}},
		{"{\"add\":{\"path\":\"a\xff\"}}", &Action{Add: &Add{Path: "a\uFFFD"}}},
		{`{"remove":{"path":"a","deletionTimestamp":5,"DELETIONTIMESTAMP":1}}`, &Action{Remove: &Remove{Path: "a", DeletionTimestamp: pqPtr[int64](1)}}},
		{`{"add":{"path":"a"},"remove":{"path":"a"}}`, &Action{Add: &Add{Path: "a"}}},
		{`{"add":null}`, &Action{}},
	} {
		if err := oracleLine([]byte(tc.line), tc.a); err == nil {
			t.Errorf("oracle accepts %s read as %s", tc.line, pqJSON(tc.a))
		}
	}
	if err := oracleLine([]byte(`{"add":{"path":"\ud83d\ude00","x":{"Path":1}},"zz":[1]}`), &Action{Add: &Add{Path: "\U0001F600"}}); err != nil {
		t.Errorf("oracle refuses an exact reading: %v", err)
	}
	if !strings.Contains(fmt.Sprint(checkSurrogates([]byte(`"\\ud800"`))), "<nil>") {
		t.Errorf("an escaped backslash before ud800 is not an escape")
	}
}
