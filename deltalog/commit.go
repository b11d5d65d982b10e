package deltalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/deltavacuum/deltavacuum/storage"
)

// ErrVersionExists is returned (wrapped) when a commit's version was taken by another writer.
var ErrVersionExists = errors.New("commit version already exists")

// EncodeCommit encodes actions as newline-delimited JSON, one action per line, in order.
func EncodeCommit(actions []any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, a := range actions {
		if err := enc.Encode(a); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// WriteCommit writes version v with put-if-absent; ErrVersionExists when it is taken.
func WriteCommit(ctx context.Context, store storage.Store, v int64, actions []any) error {
	data, err := EncodeCommit(actions)
	if err != nil {
		return err
	}
	if err := store.PutIfAbsent(ctx, CommitKey(v), data); err != nil {
		if errors.Is(err, storage.ErrExist) {
			return fmt.Errorf("%w: version %d of %s", ErrVersionExists, v, store.Location())
		}
		return fmt.Errorf("writing version %d of %s: %w", v, store.Location(), err)
	}
	return nil
}
