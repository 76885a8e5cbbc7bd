package gate

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/chromegate/chromegate/policy"
)

// Sessions records which principal drives each browser session, so that
// the requests its pages make (KindRequest) are decided for that
// principal. The MCP server binds a session on every call and forgets it
// when the session ends. A session no call has bound decides as an
// anonymous principal, which the default policy treats like any other and
// a policy keyed on roles denies.
//
// Sessions is safe for concurrent use; a nil *Sessions knows no session.
type Sessions struct {
	m    sync.Map // session → policy.Principal
	prov atomic.Pointer[Provenance]
}

// Provenance says, for a request a page of session makes to url, what of
// the content the session's model was shown it carries (input.flow) and
// which origins that content came from (input.read_origins).
type Provenance func(session, url string) (flows []policy.Flow, read []string)

// Track has the requests of every session decided with p's flows; the
// server that tracks provenance sets it once, before it serves.
func (s *Sessions) Track(p Provenance) {
	if s != nil {
		s.prov.Store(&p)
	}
}

// Provenance is what Track's function says of a request; nothing when
// no provenance is tracked.
func (s *Sessions) Provenance(session, url string) ([]policy.Flow, []string) {
	if s == nil {
		return nil, nil
	}
	if p := s.prov.Load(); p != nil && *p != nil {
		return (*p)(session, url)
	}
	return nil, nil
}

// Bind records that p drives session.
func (s *Sessions) Bind(session string, p policy.Principal) {
	if s == nil {
		return
	}
	p = withRoles(p)
	if cur, ok := s.m.Load(session); ok {
		if c := cur.(policy.Principal); c.Name == p.Name && c.Transport == p.Transport && slices.Equal(c.Roles, p.Roles) {
			return
		}
	}
	s.m.Store(session, p)
}

// Forget drops what Bind learnt of a session that ended.
func (s *Sessions) Forget(session string) {
	if s != nil {
		s.m.Delete(session)
	}
}

// Principal is who drives session; the zero Principal when unknown.
func (s *Sessions) Principal(session string) policy.Principal {
	if s != nil {
		if v, ok := s.m.Load(session); ok {
			return v.(policy.Principal)
		}
	}
	return policy.Principal{}
}

// withRoles gives a principal without roles an empty list: input.principal.roles
// is always an array.
func withRoles(p policy.Principal) policy.Principal {
	if p.Roles == nil {
		p.Roles = []string{}
	}
	return p
}
