package deltalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/deltavacuum/deltavacuum/internal/strictjson"
)

// The log is decoded exactly (VACUUM-SPEC section 2 point 6): Delta's JSON keys are
// case-sensitive, and a line with a duplicate key, invalid UTF-8 or a value of the wrong type
// is a corrupt log. encoding/json matches keys case-insensitively, lets the last of two equal
// keys win and replaces invalid UTF-8 with U+FFFD, so a careless or hostile writer could make
// it read {"REMOVE":…} as a remove, or a path other than the one written. Every read of log
// content goes through internal/strictjson, the one strict decoder of the program (the
// service's request bodies use it too).

// unmarshalStrict decodes one JSON value of log content into v.
func unmarshalStrict(b []byte, v any) error {
	return strictjson.Unmarshal(b, v)
}

// protocolActions are the action names of the Delta protocol (PROTOCOL.md, "Actions"). Every
// line of a commit holds one action. A line may carry other, unknown keys beside it (Spark's
// EvolvabilitySuite writes such lines on purpose, in the fixture
// transaction_log_schema_evolvability, and readers must ignore unknown actions), but a line
// holding two of these is corrupt: which of them would a reader apply?
var protocolActions = map[string]bool{
	"add": true, "remove": true, "cdc": true, "metaData": true, "protocol": true,
	"commitInfo": true, "txn": true, "domainMetadata": true, "sidecar": true,
	"checkpointMetadata": true,
}

// actionDecoder decodes the lines of a commit or JSON checkpoint, one action a line. It is
// reused from line to line; the zero value is ready to use.
type actionDecoder struct {
	dec  jsontext.Decoder
	name []byte // an unquoted object name holding escapes
}

// errNotObject marks a line that is not a JSON object.
var errNotObject = errors.New("not a JSON object")

// decode decodes line (one line, without its newline) into a, which it resets first. The line
// must be exactly one JSON object holding at most one protocol action, whose value is an
// object; unknown keys are skipped but must still be valid JSON (no duplicate names, valid
// UTF-8). The decoded strings do not alias line.
func (d *actionDecoder) decode(line []byte, a *Action) error {
	*a = Action{}
	d.dec.Reset(bytes.NewBuffer(line), strictjson.Options)
	tok, err := d.dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return errNotObject
	}
	action := ""
	for d.dec.PeekKind() != '}' {
		raw, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		name, err := d.unquote(raw)
		if err != nil {
			return err
		}
		if !protocolActions[string(name)] {
			// An unknown action (REMOVE, Add, some_new_action): ignored, as the protocol
			// requires, but read through so that its syntax is checked.
			if err := d.dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		if action != "" {
			return fmt.Errorf("the line holds two actions, %s and %s; each line of a commit is one action", action, name)
		}
		action = string(name)
		if k := d.dec.PeekKind(); k != '{' {
			if k == 0 { // a syntax error: let ReadValue report it
				_, err := d.dec.ReadValue()
				return err
			}
			return fmt.Errorf("the %s action is a JSON %v, not an object", action, k)
		}
		if err := d.decodeAction(action, a); err != nil {
			return err
		}
	}
	if _, err := d.dec.ReadToken(); err != nil { // the closing brace
		return err
	}
	if _, err := d.dec.ReadToken(); err != io.EOF {
		if err == nil {
			return errors.New("the line holds more than one JSON value; each line of a commit is one action")
		}
		return err
	}
	return a.validate()
}

// unquote returns the name raw (a quoted JSON string) stands for, without allocating when it
// holds no escape.
func (d *actionDecoder) unquote(raw jsontext.Value) ([]byte, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], nil
	}
	var err error
	d.name, err = jsontext.AppendUnquote(d.name[:0], raw)
	return d.name, err
}

// decodeAction decodes the value of a protocol action into its field of a; the actions this
// program does not use (txn, domainMetadata) are read through.
func (d *actionDecoder) decodeAction(name string, a *Action) error {
	var v any
	switch name {
	case "add":
		a.Add = new(Add)
		v = a.Add
	case "remove":
		a.Remove = new(Remove)
		v = a.Remove
	case "cdc":
		a.CDC = new(CDC)
		v = a.CDC
	case "metaData":
		a.Metadata = new(Metadata)
		v = a.Metadata
	case "protocol":
		a.Protocol = new(Protocol)
		v = a.Protocol
	case "sidecar":
		a.Sidecar = new(Sidecar)
		v = a.Sidecar
	case "checkpointMetadata":
		a.CheckpointMetadata = new(CheckpointMetadata)
		v = a.CheckpointMetadata
	case "commitInfo":
		a.CommitInfo = new(CommitInfo)
		v = a.CommitInfo
	default:
		return d.dec.SkipValue()
	}
	return json.UnmarshalDecode(&d.dec, v)
}

// validate checks what a type cannot: the fields without which an action names no file. A
// file action without a path (a writer that wrote "Path", say) cannot be located, and a
// deletion vector without a storage type cannot be either; guessing would risk deleting a
// file the table needs.
func (a *Action) validate() error {
	var path string
	var dv *DeletionVector
	switch {
	case a.Add != nil:
		path, dv = a.Add.Path, a.Add.DeletionVector
	case a.Remove != nil:
		path, dv = a.Remove.Path, a.Remove.DeletionVector
	case a.CDC != nil:
		path = a.CDC.Path
	case a.Sidecar != nil:
		path = a.Sidecar.Path
	default:
		return nil
	}
	if path == "" {
		return fmt.Errorf("the %s action has no path", a.name())
	}
	if dv != nil && dv.StorageType == "" {
		return fmt.Errorf("the deletion vector of %s %q has no storageType", a.name(), path)
	}
	return nil
}

// name returns the protocol's name of the action a holds.
func (a *Action) name() string {
	switch a.kind() {
	case KindAdd:
		return "add"
	case KindRemove:
		return "remove"
	case KindCDC:
		return "cdc"
	case KindMetadata:
		return "metaData"
	case KindProtocol:
		return "protocol"
	case KindSidecar:
		return "sidecar"
	case KindCheckpointMetadata:
		return "checkpointMetadata"
	case KindCommitInfo:
		return "commitInfo"
	}
	return "unknown"
}
