package webmcp

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/chromegate/chromegate/executor"
)

// Hub is a browser session's page-tool subscribers and the queue that
// delivers their events in order, on one goroutine. It is safe for
// concurrent use.
type Hub struct {
	log *slog.Logger
	key string // the in-page script's state key, random per session

	mu      sync.Mutex
	subs    map[int]func(executor.PageToolsEvent)
	nextSub int
	queue   []executor.PageToolsEvent
	running bool
	watched atomic.Int32
}

// NewHub returns a Hub.
func NewHub(log *slog.Logger) *Hub {
	var b [8]byte
	_, _ = rand.Read(b[:])
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The in-page script keeps its state under this name in the page's
	// main world, where the page can see it: a random name that says
	// nothing about chromegate.
	return &Hub{log: log, key: "_" + hex.EncodeToString(b[:]), subs: map[int]func(executor.PageToolsEvent){}}
}

// publish queues ev for every subscriber; it never blocks.
func (h *Hub) publish(ev executor.PageToolsEvent) {
	h.mu.Lock()
	if len(h.subs) == 0 {
		h.mu.Unlock()
		return
	}
	h.queue = append(h.queue, ev)
	if !h.running {
		h.running = true
		go h.drain()
	}
	h.mu.Unlock()
}

func (h *Hub) drain() {
	for {
		h.mu.Lock()
		if len(h.queue) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		ev := h.queue[0]
		h.queue = h.queue[1:]
		subs := make([]func(executor.PageToolsEvent), 0, len(h.subs))
		for _, fn := range h.subs {
			subs = append(subs, fn)
		}
		h.mu.Unlock()
		for _, fn := range subs {
			fn(ev)
		}
	}
}

// Subscribe adds fn as a subscriber; the backend then calls Watch on its
// tabs and publishes their current tools (see Tab.Merged). stop removes it.
func (h *Hub) Subscribe(fn func(executor.PageToolsEvent)) (stop func()) {
	h.mu.Lock()
	h.nextSub++
	id := h.nextSub
	h.subs[id] = fn
	h.mu.Unlock()
	h.watched.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs, id)
			h.mu.Unlock()
			h.watched.Add(-1)
		})
	}
}

// Watched reports whether anyone subscribes.
func (h *Hub) Watched() bool { return h.watched.Load() > 0 }

// Publish queues ev for the subscribers.
func (h *Hub) Publish(ev executor.PageToolsEvent) { h.publish(ev) }
