package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kube-annotator/kube-annotator/pkg/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal ends the process at once
	}()
	code := cli.Main(ctx, os.Args, cli.Streams{Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
