package mcp

import (
	"sync"

	"github.com/chromegate/chromegate/executor"
)

// perExecutor keeps one value per executor (a browser context), forgotten
// once the executor is done: what the server did once for a context
// (its --storage-state restored, its checkpoint restored) or last stored
// of it (its checkpoint's hash). A context started anew is a new executor,
// with nothing kept.
//
// A perExecutor is safe for concurrent use.
type perExecutor struct{ m sync.Map }

// watch forgets ex's value when ex is done; call it once, when the first
// value of ex is stored.
func (p *perExecutor) watch(ex executor.Executor) {
	go func() {
		<-ex.Done()
		p.m.Delete(ex)
	}()
}

// once is ex's sync.Once.
func (p *perExecutor) once(ex executor.Executor) *sync.Once {
	v, loaded := p.m.LoadOrStore(ex, new(sync.Once))
	if !loaded {
		p.watch(ex)
	}
	return v.(*sync.Once)
}

// load is ex's value.
func (p *perExecutor) load(ex executor.Executor) (any, bool) { return p.m.Load(ex) }

// store makes v ex's value.
func (p *perExecutor) store(ex executor.Executor, v any) {
	if _, loaded := p.m.Swap(ex, v); !loaded {
		p.watch(ex)
	}
}
