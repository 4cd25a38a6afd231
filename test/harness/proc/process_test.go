package proc

import "testing"

// FreeAddr never hands out a port twice. The kernel does: of 1,000
// loopback ports taken with port 0 and closed at once, 71 and 80 (in two
// runs) repeated one handed out before, which is how TestShardedRunDynamic
// once gave two replicas the same metrics port.
func TestFreeAddrHandsOutEachPortOnce(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		addr := FreeAddr(t)
		if seen[addr] {
			t.Fatalf("FreeAddr returned %s twice", addr)
		}
		seen[addr] = true
	}
}
