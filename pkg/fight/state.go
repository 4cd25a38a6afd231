package fight

import "time"

// state is what the detector keeps of an object written more than once.
type state struct {
	// keys are the keys written last, at most MaxKeys.
	keys []keyState
	// last is the time of the last write (UnixNano), held that of the
	// last write of a key fought over, or of the last write before the
	// fight started.
	last, held int64
	// backoff is the wait after held; 0 until a fight starts.
	backoff time.Duration
	// reported is when the fight was last reported (UnixNano).
	reported int64
	// managers are the other field managers seen in the fight.
	managers []string
}

// keyState is one key of an object: the value it was last written with,
// and the times of the last Writes writes with that value.
type keyState struct {
	keyValue
	// writes is a ring whose oldest entry is at next.
	writes [Writes]int64
	next   uint8
	n      uint8
	// fought is set while the key is fought over.
	fought bool
}

// count returns, of the keys c sets to the value they were written with
// last, the most writes within Window before now, and whether one of
// them is fought over.
func (s *state) count(c Change, now int64) (writes int, fought bool) {
	for _, kv := range c.keys {
		if ks := s.key(kv.key); ks != nil && ks.value == kv.value {
			writes = max(writes, ks.within(now))
			fought = fought || ks.fought
		}
	}
	return writes, fought
}

// fight marks the keys c sets with Writes writes within Window as fought
// over, and returns the time of the last write of them.
func (s *state) fight(c Change, now int64) (last int64) {
	for _, kv := range c.keys {
		if ks := s.key(kv.key); ks != nil && ks.value == kv.value && ks.within(now) >= Writes {
			ks.fought = true
			last = max(last, ks.last())
		}
	}
	return last
}

// wrote adds a write of c at t, and reports whether it set a key fought
// over. A key written with another value starts its count again and is
// fought over no more; once no key is, the fight ends (backoff is 0).
func (s *state) wrote(c Change, t int64) (fought bool) {
	for _, kv := range c.keys {
		ks := s.key(kv.key)
		switch {
		case ks == nil:
			ks = s.insert(kv)
		case ks.value != kv.value:
			*ks = keyState{keyValue: kv}
		case ks.fought:
			fought = true
		}
		ks.add(t)
	}
	s.last = max(s.last, t)
	if s.backoff > 0 && !s.fighting() {
		s.backoff, s.managers = 0, nil
	}
	return fought
}

// fighting reports whether a key is fought over.
func (s *state) fighting() bool {
	for i := range s.keys {
		if s.keys[i].fought {
			return true
		}
	}
	return false
}

// key returns the state of key, nil when none is kept.
func (s *state) key(key uint64) *keyState {
	for i := range s.keys {
		if s.keys[i].key == key {
			return &s.keys[i]
		}
	}
	return nil
}

// insert keeps kv, in place of the key written longest ago (one not
// fought over, when there is one) once MaxKeys are kept.
func (s *state) insert(kv keyValue) *keyState {
	if len(s.keys) < MaxKeys {
		s.keys = append(s.keys, keyState{keyValue: kv})
		return &s.keys[len(s.keys)-1]
	}
	old := 0
	for i := range s.keys {
		a, b := &s.keys[i], &s.keys[old]
		if a.fought != b.fought && !a.fought || a.fought == b.fought && a.last() < b.last() {
			old = i
		}
	}
	s.keys[old] = keyState{keyValue: kv}
	return &s.keys[old]
}

func (k *keyState) add(t int64) {
	k.writes[k.next] = t
	k.next = (k.next + 1) % Writes
	k.n = min(k.n+1, Writes)
}

// last is the time of the key's last write.
func (k *keyState) last() int64 { return k.writes[(k.next+Writes-1)%Writes] }

// within counts the key's writes within Window before now.
func (k *keyState) within(now int64) int {
	n := 0
	for i := range int(k.n) {
		if now-k.writes[(int(k.next)+Writes-1-i)%Writes] <= int64(Window) {
			n++
		}
	}
	return n
}
