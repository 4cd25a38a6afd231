package child

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// handedOut holds the addresses FreeAddrs returned, which it does not
// return again: a port is free again once closed, so children started
// one after the other could otherwise be given the same one.
var handedOut sync.Map

// FreeAddrs returns n loopback addresses with distinct ports that were
// free a moment ago, and not returned before, for a child to listen on.
func FreeAddrs(n int) ([]string, error) {
	var addrs []string
	for tries := 0; len(addrs) < n; tries++ {
		if tries == 100*n {
			return nil, fmt.Errorf("find %d free ports not handed out before: %d found in %d tries", n, len(addrs), tries)
		}
		// Held open until all are chosen, so that no port is chosen twice.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		if _, taken := handedOut.LoadOrStore(l.Addr().String(), true); !taken {
			addrs = append(addrs, l.Addr().String())
		}
	}
	return addrs, nil
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// Get returns the body of url, which must answer 200.
func Get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, nil
}

// WaitReady waits up to timeout until url answers 200.
func WaitReady(ctx context.Context, url string, timeout time.Duration, alive func() error) error {
	return WaitProbe(ctx, url, true, timeout, 100*time.Millisecond, alive)
}

// WaitProbe waits up to timeout, polling every interval, until url
// answers 200 (ready) or anything else (not ready).
func WaitProbe(ctx context.Context, url string, ready bool, timeout, interval time.Duration, alive func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := Get(ctx, url)
		if (err == nil) == ready {
			return nil
		}
		if aerr := alive(); aerr != nil {
			return aerr
		}
		if time.Now().After(deadline) {
			if ready {
				return fmt.Errorf("not ready after %v: %w", timeout, err)
			}
			return fmt.Errorf("still ready after %v", timeout)
		}
		if err := progress.Sleep(ctx, interval); err != nil {
			return err
		}
	}
}

// Heap is the Go heap as a process's metrics show it, in bytes.
type Heap struct {
	// Inuse is go_memstats_heap_inuse_bytes: the spans that hold live
	// objects, including the free slots among them.
	Inuse float64
	// Alloc is go_memstats_heap_alloc_bytes: the objects themselves,
	// live or not collected yet.
	Alloc float64
}

// MinHeap samples the heap every second for window and returns the
// lowest of each figure.
func MinHeap(ctx context.Context, url string, window time.Duration) (Heap, error) {
	var lowest Heap
	for deadline := time.Now().Add(window); ; {
		body, err := Get(ctx, url)
		if err != nil {
			return Heap{}, fmt.Errorf("kube-annotator metrics: %w", err)
		}
		v := Heap{Inuse: promtext.MetricValue(body, "go_memstats_heap_inuse_bytes", nil), Alloc: promtext.MetricValue(body, "go_memstats_heap_alloc_bytes", nil)}
		if v.Inuse == 0 || v.Alloc == 0 {
			return Heap{}, fmt.Errorf("kube-annotator metrics at %s have no go_memstats_heap_inuse_bytes or go_memstats_heap_alloc_bytes", url)
		}
		if lowest.Inuse == 0 || v.Inuse < lowest.Inuse {
			lowest.Inuse = v.Inuse
		}
		if lowest.Alloc == 0 || v.Alloc < lowest.Alloc {
			lowest.Alloc = v.Alloc
		}
		if time.Now().After(deadline) {
			return lowest, nil
		}
		if err := progress.Sleep(ctx, time.Second); err != nil {
			return Heap{}, err
		}
	}
}
