package logs

import (
	"context"
	"flag"
	"io"
	"strconv"
	"sync"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// quiet counts the commands running with klog's output discarded; the
// last to end restores it.
var quiet struct {
	sync.Mutex
	n int
}

// AddFlags adds klog's verbosity flags, -v and --vmodule, to fs.
func AddFlags(fs *pflag.FlagSet) {
	for _, name := range []string{"v", "vmodule"} {
		f := pflag.PFlagFromGoFlag(klogFlags().Lookup(name))
		if name == "v" {
			f.Shorthand = "v"
		}
		fs.AddFlag(f)
	}
}

// Setup sets up the logs of a command that ends by itself: its own logger
// in ctx, writing to w at -v's verbosity (fs holds the flags AddFlags
// added); and, unless -v or --vmodule is given, klog's global output
// discarded. Through it client-go logs every failed request, ten lines
// that say what the command's error says once. The returned func restores
// klog.
func Setup(ctx context.Context, w io.Writer, fs *pflag.FlagSet) (context.Context, func()) {
	v := 0
	if f := fs.Lookup("v"); f != nil {
		v, _ = strconv.Atoi(f.Value.String())
	}
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(w), textlogger.Verbosity(v)))
	ctx = klog.NewContext(ctx, logger.WithName("kube-annotator"))
	if fs.Changed("v") || fs.Changed("vmodule") {
		return ctx, func() {}
	}
	Quiet(true)
	return ctx, func() { Quiet(false) }
}

// klogFlags are klog's flags, bound to its global settings once: binding
// them reads the settings, which Quiet writes.
var klogFlags = sync.OnceValue(func() *flag.FlagSet {
	gfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(gfs)
	return gfs
})

// Quiet discards klog's output, errors included, or restores it to
// stderr, as the count of quiet commands says: each Quiet(true) is undone
// by a Quiet(false).
func Quiet(on bool) {
	quiet.Lock()
	defer quiet.Unlock()
	if on {
		quiet.n++
	} else {
		quiet.n--
	}
	if on && quiet.n > 1 || !on && quiet.n > 0 {
		return
	}
	threshold := "ERROR"
	if on {
		threshold = "FATAL"
		klog.SetOutput(io.Discard)
	}
	klog.LogToStderr(!on)
	_ = klogFlags().Set("stderrthreshold", threshold) // a valid value
}
