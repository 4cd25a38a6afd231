package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/test/bench/rig"
)

func TestParseFlagsShards(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string // empty: no error
	}{
		{name: "off by default"},
		{name: "three", args: []string{"--shards", "3"}},
		{name: "one", args: []string{"--shards", "1"}, wantErr: "--shards must be 0 (off) or at least 2, got 1"},
		{name: "negative", args: []string{"--shards", "-1"}, wantErr: "--shards must be 0 (off) or at least 2, got -1"},
		{name: "too many", args: []string{"--shards", "17"}, wantErr: "--shards must be at most 16"},
		{name: "with memory objects", args: []string{"--shards", "3", "--memory-objects", "20000"}, wantErr: "--memory-objects cannot be used with --shards"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.args)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("parseFlags(%q): %v", tc.args, err)
				}
				if gates := o.APIServerFlags()["feature-gates"]; (o.Shards > 0) != (gates == "ShardedListAndWatch=true") {
					t.Errorf("--shards %d: feature gates %q", o.Shards, gates)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("parseFlags(%q) = %v, want an error with %q", tc.args, err, tc.wantErr)
			}
		})
	}
}

func TestParseFlagsVariantsAndScale(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    []rig.Variant
		wantErr string // empty: no error
	}{
		{name: "none"},
		{name: "environment and flags", args: []string{"--variant", "list=,KUBE_FEATURE_WatchListClient=false,--workers=4"},
			want: []rig.Variant{{Name: "list", Env: []string{"KUBE_FEATURE_WatchListClient=false"}, Args: []string{"--workers=4"}}}},
		{name: "another binary", args: []string{"--variant", "old=bin/old", "--variant", "new=bin/new"},
			want: []rig.Variant{{Name: "old", Binary: "bin/old"}, {Name: "new", Binary: "bin/new"}}},
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
			if !slices.EqualFunc(o.Variants, tc.want, func(a, b rig.Variant) bool {
				return a.Name == b.Name && a.Binary == b.Binary && slices.Equal(a.Env, b.Env) && slices.Equal(a.Args, b.Args)
			}) {
				t.Errorf("variants = %+v, want %+v", o.Variants, tc.want)
			}
		})
	}
}

func TestParseFlagsShapes(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    []string
		wantErr string // empty: no error
	}{
		{args: nil, want: []string{"small"}},
		{args: []string{"--realistic"}, want: []string{"small", "realistic"}},
		{args: []string{"--shapes", "realistic"}, want: []string{"realistic"}},
		{args: []string{"--realistic", "--shapes", "realistic"}, want: []string{"realistic"}},
		{args: []string{"--shapes", "realistic,small"}, want: []string{"small", "realistic"}},
		{args: []string{"--shapes", "big"}, wantErr: `no shape "big"`},
	} {
		o, err := parseFlags(tc.args)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseFlags(%q) = %v, want an error with %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("parseFlags(%q): %v", tc.args, err)
		}
		var got []string
		for _, s := range o.Shapes() {
			got = append(got, s.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("parseFlags(%q): shapes %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestParseFlagsOwners(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		wantOwners int
		wantCached int
		wantErr    string // empty: no error
	}{
		{name: "off by default", wantCached: 2000},
		{name: "5000 Pods", args: []string{"--owners", "5000"}, wantOwners: 5000, wantCached: 2000},
		{name: "no owners cached", args: []string{"--owners", "100", "--owners-cached", "0"}, wantOwners: 100},
		{name: "negative", args: []string{"--owners", "-1"}, wantErr: "--owners must be between 0 (off) and 50000, got -1"},
		{name: "too many Pods", args: []string{"--owners", "50001"}, wantErr: "--owners must be between 0 (off) and 50000"},
		{name: "too many owners cached", args: []string{"--owners", "10", "--owners-cached", "20001"}, wantErr: "--owners-cached must be between 0 and 20000"},
		{name: "with shards", args: []string{"--owners", "10", "--shards", "3"}, wantErr: "--owners cannot be used with --shards"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.args)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("parseFlags(%q): %v", tc.args, err)
				}
				if o.Owners != tc.wantOwners || o.OwnersCached != tc.wantCached {
					t.Errorf("parseFlags(%q): owners %d, cached %d; want %d, %d", tc.args, o.Owners, o.OwnersCached, tc.wantOwners, tc.wantCached)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("parseFlags(%q) = %v, want an error with %q", tc.args, err, tc.wantErr)
			}
		})
	}
}
