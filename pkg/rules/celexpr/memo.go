package celexpr

import (
	"sync"
	"sync/atomic"
)

// maxResults bounds the results an expression's memo keeps, in entries
// of each of its two generations.
const maxResults = 4096

// Memo keeps values by key, safe for concurrent use. It holds at most
// 2×max of them, in two generations: when the newer is full it becomes
// the older, and the older is dropped; a value found in the older is moved
// to the newer. Values used again and again stay while keys seen once
// pass through. A memo that is rarely of use — fewer hits than a quarter
// of max while a generation filled, after the first — is not asked for
// the next 8×max lookups (see Use), so that keys never seen twice cost
// little more than no memo.
type Memo[V any] struct {
	Max      int
	mu       sync.RWMutex
	new, old map[string]V
	hits     atomic.Int64 // since new was made
	skip     atomic.Int64 // lookups use declines still
}

// Use reports whether the memo is worth building a key for and asking.
func (m *Memo[V]) Use() bool {
	if m.skip.Load() <= 0 {
		return true
	}
	m.skip.Add(-1)
	return false
}

// Get returns the value kept for key.
func (m *Memo[V]) Get(key []byte) (V, bool) {
	m.mu.RLock()
	v, ok := m.new[string(key)]
	promote := false
	if !ok {
		v, ok = m.old[string(key)]
		promote = ok
	}
	m.mu.RUnlock()
	if ok {
		m.hits.Add(1)
	}
	if promote {
		m.Put(string(key), v)
	}
	return v, ok
}

// Put keeps v for key.
func (m *Memo[V]) Put(key string, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.new == nil || len(m.new) >= m.Max {
		if m.old != nil && m.hits.Load() < int64(m.Max/4) {
			m.skip.Store(int64(8 * m.Max))
		}
		m.old, m.new = m.new, make(map[string]V)
		m.hits.Store(0)
	}
	m.new[key] = v
}
