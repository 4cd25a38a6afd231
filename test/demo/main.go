package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// options are the demo's command-line flags.
type options struct {
	binary         string
	rules          string
	exitAfterReady bool
	timeout        time.Duration
	verbosity      string
}

// demo is one run: what it started, and how to stop it.
type demo struct {
	opts     options
	start    time.Time
	tmp      string
	env      *h.Env
	kcm      *proc.Child
	kcmLog   string
	ctrl     *proc.Child
	cleanups []func() error // run last first
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "bin/kube-annotator", "kube-annotator binary to run (build it with `go build -o bin/kube-annotator .`)")
	flag.StringVar(&o.rules, "rules", "rules.yaml", "rules file to run the controller with")
	flag.BoolVar(&o.exitAfterReady, "exit-after-ready", false, "stop and clean up once everything is annotated, instead of waiting for Ctrl-C; exit 0 only if it was")
	flag.DurationVar(&o.timeout, "timeout", 60*time.Second, "how long to wait for the objects to be annotated")
	flag.StringVar(&o.verbosity, "v", "2", "the controller's log verbosity (2 logs every patch)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "demo: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	// Run as `make demo | tee demo.log`, Ctrl-C ends tee too: the demo's
	// next line to stderr would then raise SIGPIPE and kill it before it
	// stops the control plane, whose processes are in groups of their own.
	// Notified, not ignored, so that its children keep the default; the
	// lines are lost, the cleanup is not.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	go func() {
		s := <-sigs
		logf("Received %v: stopping", s)
		cancel()
		for s := range sigs {
			logf("Received %v again: still stopping, please wait", s)
		}
	}()

	d := &demo{opts: o, start: time.Now()}
	ready, err := d.run(ctx)
	if err != nil && !ready && ctx.Err() != nil {
		err = errors.New("interrupted before everything was annotated")
	}
	if err != nil {
		logf("FAILED: %v", err)
		var died *diedError
		if d.kcm != nil && ctx.Err() == nil && !(errors.As(err, &died) && died.child == d.ctrl) {
			if t := proc.LogTail(d.kcmLog, 15); t != "" {
				logf("Last lines of %s:\n%s", d.kcmLog, t)
			}
		}
	}
	logf("Cleaning up")
	cerr := d.cleanup()
	if cerr != nil {
		logf("FAILED to clean up: %v", cerr)
	} else {
		logf("Stopped everything the demo started and removed its files")
	}
	if err != nil || cerr != nil || !ready {
		os.Exit(1)
	}
}

// run starts everything and waits until the objects are annotated, then,
// unless --exit-after-ready, for ctx to end. ready is whether they were.
func (d *demo) run(ctx context.Context) (ready bool, err error) {
	assets := h.AssetsDir()
	if err := d.preflight(assets); err != nil {
		return false, err
	}
	d.tmp, err = os.MkdirTemp("", "kube-annotator-demo-")
	if err != nil {
		return false, err
	}
	d.cleanups = append(d.cleanups, func() error { return os.RemoveAll(d.tmp) })

	logf("Starting etcd and kube-apiserver v%s from %s (a few seconds)", h.K8sVersion(), assets)
	d.env, err = h.Start()
	if err != nil {
		return false, err
	}
	d.cleanups = append(d.cleanups, func() error {
		logf("Stopping kube-apiserver and etcd")
		return d.env.Stop()
	})
	logf("Control plane up at %s after %v; Frigate CRD installed", d.env.Config.Host, since(d.start))
	if ctx.Err() != nil {
		return false, ctx.Err()
	}

	d.kcmLog = filepath.Join(d.tmp, "kube-controller-manager.log")
	d.kcm, err = startKCM(assets, d.env.Kubeconfig, d.kcmLog)
	if err != nil {
		return false, err
	}
	d.cleanups = append(d.cleanups, func() error {
		err := stop(d.kcm, 10*time.Second)
		if isSignalExit(err) {
			logf("  kube-controller-manager stopped (%v)", err)
			return nil
		}
		return err
	})
	logf("Started kube-controller-manager (pid %d, controllers %s), logging to %s",
		d.kcm.PID(), strings.Join(h.ControllerManagerControllers, ","), d.kcmLog)

	if err := createNamespace(ctx, d.env.Dynamic, 10*time.Second); err != nil {
		return false, err
	}
	if err := createWorkloads(ctx, d.env.Dynamic); err != nil {
		return false, err
	}

	logf("Starting %s %s", d.opts.binary, strings.Join(controllerArgs(d.opts.rules, d.env.Kubeconfig, d.opts.verbosity), " "))
	// client-go lists its feature gates at -v 1; -v 2, for the patches,
	// would open the controller's log with them, and --vmodule does not
	// silence them.
	out := &prefixWriter{w: os.Stderr, prefix: "[kube-annotator] ", skip: []string{`"Feature gate default state"`}}
	d.ctrl, err = startController(d.opts.binary, d.opts.rules, d.env.Kubeconfig, d.opts.verbosity, out)
	if err != nil {
		return false, err
	}
	d.cleanups = append(d.cleanups, func() error {
		if err := stop(d.ctrl, 15*time.Second); err != nil {
			return fmt.Errorf("kube-annotator: %w", err)
		}
		return nil
	})
	ctrlStart := time.Now()

	if err := waitAnnotated(ctx, d.env.Dynamic, d.opts.timeout, d.died); err != nil {
		return false, err
	}
	logf("Ready: all annotated %v after the controller started, %v after the demo started", since(ctrlStart), since(d.start))
	if err := d.printTable(assets); err != nil {
		return true, err
	}
	d.printHelp(assets)
	if d.opts.exitAfterReady {
		return true, nil
	}
	select {
	case <-ctx.Done():
		return true, nil
	case <-d.ctrl.Done():
		return true, d.died()
	case <-d.kcm.Done():
		return true, d.died()
	}
}

// preflight checks, before starting anything, that every file exists.
func (d *demo) preflight(assets string) error {
	for _, f := range []string{"kube-controller-manager", "kubectl"} {
		if _, err := os.Stat(filepath.Join(assets, f)); err != nil {
			return fmt.Errorf("%s not found in %s: run `make envtest-assets` (or set %s)", f, assets, h.AssetsEnv)
		}
	}
	if _, err := os.Stat(d.opts.binary); err != nil {
		return fmt.Errorf("controller binary: %w (build it with `go build -o bin/kube-annotator .` or `make build`)", err)
	}
	if _, err := os.Stat(d.opts.rules); err != nil {
		return fmt.Errorf("rules file: %w", err)
	}
	return nil
}

// died returns an error if a process the demo relies on has exited.
func (d *demo) died() error {
	for _, c := range []*proc.Child{d.ctrl, d.kcm} {
		if c == nil {
			continue
		}
		if done, _ := c.Exited(); done {
			return &diedError{c}
		}
	}
	return nil
}

// diedError is a child that exited while the demo still needed it.
type diedError struct{ child *proc.Child }

func (e *diedError) Error() string {
	return fmt.Sprintf("%s (pid %d) exited unexpectedly: %s", e.child.Name, e.child.PID(), proc.ExitText(e.child.Err()))
}

// cleanup stops what run started, last started first, and removes files.
func (d *demo) cleanup() error {
	var errs []error
	for i := len(d.cleanups) - 1; i >= 0; i-- {
		if err := d.cleanups[i](); err != nil {
			logf("  %v", err)
			errs = append(errs, err)
		}
	}
	d.cleanups = nil
	return errors.Join(errs...)
}

// isSignalExit reports whether a process ended because of a signal or with
// a non-zero status, as kube-controller-manager may on SIGTERM.
func isSignalExit(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}
