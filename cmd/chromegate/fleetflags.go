package main

import (
	"cmp"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/chromegate/chromegate/mcp/fleet"
)

// fleetFlags configure the state a fleet of replicas shares (serve --http
// with --redis-url; `chromegate keys` with --redis-url manages the fleet's
// keys). The Redis URL may hold a password and the checkpoint key is a
// secret: both are read from the environment or a file, never logged.
type fleetFlags struct {
	redisURL      string
	replica       string
	checkpointKey string // a file holding the key
}

const (
	envRedisURL      = "CHROMEGATE_REDIS_URL"
	envCheckpointKey = "CHROMEGATE_CHECKPOINT_KEY"
	envReplica       = "CHROMEGATE_REPLICA"
)

func (f *fleetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.redisURL, "redis-url", "", "with --http: share keys, rate limits, the session directory and session checkpoints with the other replicas of a fleet through this Redis (redis://[:password@]host:port[/db]; rediss:// for TLS); $"+envRedisURL+" keeps a password off the command line")
	fs.StringVar(&f.replica, "replica", "", "this replica's name in the fleet (default $"+envReplica+", else the host name)")
	fs.StringVar(&f.checkpointKey, "checkpoint-key-file", "", "with --redis-url: a file holding the AES-256 key (32 bytes, raw or base64) that seals session checkpoints, so another replica can restore a session whose replica died; $"+envCheckpointKey+" (base64) instead; none = no checkpoints")
}

// url is the Redis URL of the flag or the environment.
func (f *fleetFlags) url() string { return cmp.Or(f.redisURL, os.Getenv(envRedisURL)) }

// open connects to the fleet's Redis; nil when no URL is given.
func (f *fleetFlags) open(log *slog.Logger) (*fleet.Store, error) {
	url := f.url()
	if url == "" {
		if f.checkpointKey != "" {
			return nil, errors.New("--checkpoint-key-file needs --redis-url: checkpoints live in the fleet's Redis")
		}
		return nil, nil
	}
	replica := cmp.Or(f.replica, os.Getenv(envReplica))
	if replica == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("--replica: no name given and no host name: %w", err)
		}
		replica = host
	}
	key, err := f.key()
	if err != nil {
		return nil, err
	}
	store, err := fleet.Open(fleet.Options{URL: url, Replica: replica, CheckpointKey: key, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--redis-url: %w", err)
	}
	return store, nil
}

// key is the checkpoint key: the file's 32 bytes (or their base64), or the
// environment's base64; nil for none.
func (f *fleetFlags) key() ([]byte, error) {
	raw, from := []byte(os.Getenv(envCheckpointKey)), "$"+envCheckpointKey
	if f.checkpointKey != "" {
		b, err := os.ReadFile(f.checkpointKey)
		if err != nil {
			return nil, fmt.Errorf("--checkpoint-key-file: %w", err)
		}
		raw, from = b, "--checkpoint-key-file"
	}
	if len(raw) == 0 {
		return nil, nil
	}
	if len(raw) == 32 {
		return raw, nil
	}
	dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(dec) != 32 {
		// The message never quotes the key.
		return nil, fmt.Errorf("%s: want 32 bytes, raw or base64 (e.g. head -c 32 /dev/urandom | base64)", from)
	}
	return dec, nil
}
