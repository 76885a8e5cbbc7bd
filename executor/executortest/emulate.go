package executortest

import (
	"context"

	"github.com/chromegate/chromegate/executor"
)

var _ executor.Emulator = (*Fake)(nil)

// Emulate implements executor.Emulator: the fake keeps the emulation and
// reports it, validated as a backend would.
func (f *Fake) Emulate(ctx context.Context, p executor.EmulateParams) (executor.Emulation, error) {
	return run(f, ctx, "Emulate", p, func() (executor.Emulation, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, err := f.find(p.TabID); err != nil {
			return executor.Emulation{}, err
		}
		if p.Set == nil {
			return f.emulation, nil
		}
		if err := p.Set.Validate(); err != nil {
			return executor.Emulation{}, err
		}
		e := *p.Set
		if e.Geolocation != nil {
			e.GeoOrigin = p.Origin
		}
		f.emulation = e
		return e, nil
	})
}
