package main

import (
	"slices"
	"strings"
	"testing"
)

func TestParseFlagsVariantsAndScale(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    []variant
		wantErr string // empty: no error
	}{
		{name: "none"},
		{name: "environment and flags", args: []string{"--variant", "list=,KUBE_FEATURE_WatchListClient=false,--workers=4"},
			want: []variant{{name: "list", env: []string{"KUBE_FEATURE_WatchListClient=false"}, args: []string{"--workers=4"}}}},
		{name: "another binary", args: []string{"--variant", "old=bin/old", "--variant", "new=bin/new"},
			want: []variant{{name: "old", binary: "bin/old"}, {name: "new", binary: "bin/new"}}},
		{name: "no name", args: []string{"--variant", "=bin/x"}, wantErr: "want NAME=BINARY"},
		{name: "no binary part", args: []string{"--variant", "x"}, wantErr: "want NAME=BINARY"},
		{name: "bare word", args: []string{"--variant", "x=,oops"}, wantErr: `"oops" is neither ENV=VALUE nor --flag=value`},
		{name: "a runner's name", args: []string{"--variant", "raw=bin/x"}, wantErr: "raw names a runner already"},
		{name: "a million objects", args: []string{"--objects", "1000000", "--etcd-quota-bytes", "17179869184", "--clients", "32"}},
		{name: "more than a million", args: []string{"--objects", "1000001"}, wantErr: "--objects must be between 4 and 1000000"},
		{name: "quota below etcd's default", args: []string{"--etcd-quota-bytes", "1073741824"}, wantErr: "--etcd-quota-bytes must be at least"},
		{name: "no clients", args: []string{"--clients", "0"}, wantErr: "--clients must be at least 1"},
		{name: "two setups", args: []string{"--shards", "3", "--setups", "single,static", "--reshard=false"}},
		{name: "no such setup", args: []string{"--shards", "3", "--setups", "single,solo"}, wantErr: `no setup "solo"`},
		{name: "setups without single", args: []string{"--shards", "3", "--setups", "static,group"}, wantErr: "must include single"},
		{name: "setups without shards", args: []string{"--setups", "single"}, wantErr: "--setups needs --shards"},
		{name: "profile too long", args: []string{"--apiserver-profile", "/tmp", "--apiserver-profile-for", "1h"}, wantErr: "--apiserver-profile-for must be between"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseFlags(%q) = %v, want an error with %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags(%q): %v", tc.args, err)
			}
			if !slices.EqualFunc(o.variants, tc.want, func(a, b variant) bool {
				return a.name == b.name && a.binary == b.binary && slices.Equal(a.env, b.env) && slices.Equal(a.args, b.args)
			}) {
				t.Errorf("variants = %+v, want %+v", o.variants, tc.want)
			}
		})
	}
}

func TestRoundRatio(t *testing.T) {
	run := func(runner string, round int, apiCPU float64) runResult {
		return runResult{runner: runner, round: round, objects: 10000, control: cpuTimes{apiServer: apiCPU}}
	}
	s := &shapeResults{runs: []runResult{
		run(rawMetadataRunner, 1, 30), run(kaRunner, 1, 33),
		run(rawMetadataRunner, 2, 60), run(kaRunner, 2, 90), // a loaded round
		run(rawMetadataRunner, 3, 40), run(kaRunner, 3, 44),
		run(kaRunner, 4, 1000), // no baseline in its round: left out
	}}
	got := s.roundRatio(kaRunner, rawMetadataRunner, colAPICPU)
	if got == nil || *got < 1.0999 || *got > 1.1001 {
		t.Errorf("roundRatio = %v, want the median of 1.1, 1.5, 1.1: 1.1", got)
	}
	if got := s.roundRatio(crRunner, rawMetadataRunner, colAPICPU); got != nil {
		t.Errorf("roundRatio of a runner that did not run = %v, want nil", *got)
	}
	if names := s.runnerNames(); !slices.Equal(names, []string{rawMetadataRunner, kaRunner}) {
		t.Errorf("runnerNames = %q", names)
	}
}
