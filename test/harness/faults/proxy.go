package faults

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Proxy is a TCP proxy on loopback in front of the API server that a test
// can take down and bring back, so that clients see the server vanish
// (connections reset, then refused) and return, without touching the
// control plane that other tests share.
type Proxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

// NewProxy starts a proxy to the API server at host (its URL, e.g.
// https://127.0.0.1:41234, or host:port) and returns it with a copy of
// the kubeconfig file at kubeconfig that points at it. The test's end
// stops it.
func NewProxy(t testing.TB, host, kubeconfig string) (*Proxy, string) {
	t.Helper()
	host = strings.TrimPrefix(strings.TrimPrefix(host, "https://"), "http://")
	host = strings.TrimSuffix(host, "/")
	p := &Proxy{target: host, conns: map[net.Conn]bool{}}
	if err := p.listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Down)
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "proxy.kubeconfig")
	if err := os.WriteFile(kc, []byte(strings.ReplaceAll(string(data), host, p.addr)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, kc
}

func (p *Proxy) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go p.serve(ln)
	return nil
}

func (p *Proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *Proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // went down meanwhile
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// Down closes the listener and every connection through the proxy.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Up listens again on the same address.
func (p *Proxy) Up() error {
	p.mu.Lock()
	up := p.ln != nil
	addr := p.addr
	p.mu.Unlock()
	if up {
		return errors.New("proxy is up already")
	}
	return p.listen(addr)
}
