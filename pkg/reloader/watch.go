package reloader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// watch watches the rules file when Options.Watch says so, delivering
// only the events that concern it (see concerns); otherwise its channels
// never deliver. stop ends the watch.
func (r *Reloader) watch(ctx context.Context) (events <-chan struct{}, errs <-chan error, stop func(), err error) {
	if !r.opts.Watch {
		return nil, nil, func() {}, nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("watch rules file: %w", err)
	}
	// The directory, not the file: editors replace the file by renaming
	// a new one over it, and a ConfigMap volume swaps a ..data symlink.
	dir := filepath.Dir(r.opts.Path)
	if err := w.Add(dir); err != nil {
		return nil, nil, nil, fmt.Errorf("watch %s: %w", dir, errors.Join(err, w.Close()))
	}
	logger := klog.FromContext(ctx)
	logger.Info("Watching rules file", "path", r.opts.Path)
	ours := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.Events {
			if !concerns(r.opts.Path, ev.Name) {
				continue // e.g. a log file written next to the rules
			}
			logger.V(4).Info("Rules file event", "event", ev.String())
			select {
			case ours <- struct{}{}:
			default: // one pending is as good as many
			}
		}
	}()
	stop = func() {
		if err := w.Close(); err != nil {
			logger.Error(err, "Stopping the rules file watch")
		}
		<-done
	}
	return ours, w.Errors, stop, nil
}

// maxLinks bounds the symbolic links concerns follows, as the kernel
// bounds those it follows to open a file.
const maxLinks = 40

// concerns reports whether an event on name, in the directory of the rules
// file at path, may have changed what path reads: name is path itself, or
// a name in that directory that opening path goes through. In a ConfigMap
// volume "rules.yaml" is a link to "..data/rules.yaml", and "..data" a link
// to a timestamped directory; an update swaps "..data", and neither the
// new timestamped directory nor the removal of the old one concerns the
// file until "..data" points at it.
func concerns(path, name string) bool {
	path, name = filepath.Clean(path), filepath.Clean(name)
	if name == path {
		return true
	}
	return slices.Contains(through(path), name)
}

// through returns the names in path's directory that opening path goes
// through, path first: it follows each symbolic link whose target is in
// that directory, and stops at the first name that is not a link, or
// whose target leaves the directory.
func through(path string) []string {
	dir := filepath.Dir(path)
	names := []string{path}
	target := path
	for range maxLinks {
		rel, err := filepath.Rel(dir, target)
		if err != nil || !filepath.IsLocal(rel) {
			break
		}
		first, rest, _ := strings.Cut(rel, string(filepath.Separator))
		name := filepath.Join(dir, first)
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		link, err := os.Readlink(name)
		if err != nil {
			break // not a link: a file, or a directory path goes into
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(name), link)
		}
		target = filepath.Join(link, rest)
	}
	return names
}

// readFile reads the rules file at path, as rules.Load does: a file over
// rulefile.MaxFileSize is read one byte past it, for rules.Parse to refuse.
// The content is never nil.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, rulefile.MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}
