package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chromegate/chromegate/mcp/fleet"
)

// A fleet's keys are one document in its Redis (fleet.Doc), in the keys
// file's own format: a key made or revoked on any replica, or by `chromegate
// keys` pointed at the Redis, holds on every replica within fleet.MaxStale,
// and a replica that cannot confirm the keys for longer refuses every key
// (errSharedState, 503): a revoked key is never let through because Redis
// was unreachable. The keys' rate limits are the fleet's too (one bucket a
// key, charged in Redis).

// keysDoc is the name of the shared document of keys.
const keysDoc = "keys"

// OpenSharedKeyStore opens the keys of the fleet whose shared state is
// store. When the fleet has no keys yet and seedPath names a keys file with
// keys, they become the fleet's: a server grown into a fleet keeps its
// keys.
func OpenSharedKeyStore(ctx context.Context, store *fleet.Store, seedPath string) (*KeyStore, error) {
	doc := store.Doc(ctx, keysDoc)
	if seedPath != "" {
		kf, err := readKeysFile(seedPath)
		if err != nil {
			return nil, err
		}
		if len(kf.Keys) > 0 {
			b, err := json.Marshal(kf)
			if err != nil {
				return nil, err
			}
			if _, err := doc.Seed(ctx, b); err != nil {
				return nil, fmt.Errorf("seed the fleet's keys from %s: %w", seedPath, err)
			}
		}
	}
	return openKeyStore("redis (the fleet's keys)", sharedKeys{doc}, store)
}

// sharedKeys is the fleet's document of keys.
type sharedKeys struct{ doc *fleet.Doc }

func (k sharedKeys) stamp() (any, error) {
	_, ver, err := k.doc.Current()
	return ver, err
}

func (k sharedKeys) sync() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return k.doc.Sync(ctx)
}

func (k sharedKeys) read() (keysFile, any, error) {
	data, ver, err := k.doc.Current()
	if err != nil {
		return keysFile{}, nil, err
	}
	kf, err := parseSharedKeys(data)
	return kf, ver, err
}

func parseSharedKeys(data []byte) (keysFile, error) {
	if data == nil {
		return keysFile{Version: 1}, nil
	}
	var kf keysFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kf); err != nil {
		return keysFile{}, fmt.Errorf("the fleet's keys: %w", err)
	}
	if kf.Version != 1 {
		return keysFile{}, fmt.Errorf("the fleet's keys: version %d, want 1", kf.Version)
	}
	return kf, nil
}

func (k sharedKeys) update(change func(*keysFile) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return k.doc.Update(ctx, func(old []byte) ([]byte, error) {
		kf, err := parseSharedKeys(old)
		if err != nil {
			return nil, err
		}
		if err := change(&kf); err != nil {
			return nil, err
		}
		return json.Marshal(kf)
	})
}

// errSharedState is the refusal of a request whose key cannot be checked
// because the fleet's shared state is unreachable.
var errSharedState = errors.New("the key cannot be checked: the fleet's shared state (Redis) is unreachable")
