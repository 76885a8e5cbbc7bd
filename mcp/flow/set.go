package flow

// set is a set of window hashes: open addressing with linear probing over a
// power-of-two table, 8 bytes a slot, at most three quarters full. It is a
// Go map's job at a third of its memory and with lookups that hash nothing
// (the keys are hashes already). 0 is the empty slot: the hash 0 is added
// as 1, and has(0) is false.
type set struct {
	slots []uint64
	n     int
}

func (s *set) len() int { return s.n }

func (s *set) has(h uint64) bool {
	if s.n == 0 || h == 0 {
		return false
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// add adds h, and says whether it was not there.
func (s *set) add(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if (s.n+1)*4 > len(s.slots)*3 {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return false
		case 0:
			s.slots[i] = h
			s.n++
			return true
		}
	}
}

func (s *set) grow() {
	old := s.slots
	s.slots = make([]uint64, max(64, 2*len(old)))
	s.n = 0
	for _, h := range old {
		if h != 0 {
			s.add(h)
		}
	}
}
