#!/usr/bin/env bash
# Builds the control-plane binaries the tests and `make demo` run on:
# etcd, kube-apiserver, kube-controller-manager and kubectl, from the Go
# module proxy (no prebuilt downloads), into a cache outside the clone.
#
#   KUBE_ANNOTATOR_ASSETS  where to put them (default
#                          ~/.cache/kube-annotator/k8s-v$K8S_VERSION)
#
# Idempotent: a binary that is present and reports the expected version is
# kept. Prints the assets directory as its last line.
set -euo pipefail

K8S_VERSION=1.37.2
minor=$(echo "$K8S_VERSION" | cut -d. -f2)
ETCD_VERSION=3.6.6
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${KUBE_ANNOTATOR_ASSETS:-$HOME/.cache/kube-annotator/k8s-v$K8S_VERSION}
mkdir -p "$dir"

log() { printf 'envtest-assets: %s\n' "$*" >&2; }

# has NAME WANT VERSION-ARGS...: the binary exists and its version output
# contains WANT.
has() {
	local bin=$dir/$1 want=$2
	shift 2
	local out
	[ -x "$bin" ] || return 1
	# Read all the output first: grep -q closing the pipe early would fail
	# the pipeline (pipefail) when the binary is killed by SIGPIPE.
	out=$("$bin" "$@" 2>/dev/null) || return 1
	[[ $out == *"$want"* ]]
}

build_k8s() {
	local name=$1 pkg=$2 hint=$3
	local version_args=(--version)
	[ "$name" = kubectl ] && version_args=(version --client)
	if has "$name" "v$K8S_VERSION" "${version_args[@]}"; then
		log "$name v$K8S_VERSION present"
		return
	fi
	log "building $name v$K8S_VERSION ($hint)"
	local start=$SECONDS
	(cd "$root/hack/tools/k8s" &&
		CGO_ENABLED=0 go build -trimpath -o "$dir/$name.tmp" \
			-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
			"$pkg")
	mv "$dir/$name.tmp" "$dir/$name"
	log "built $name in $((SECONDS - start))s"
}

if has etcd "etcd Version: $ETCD_VERSION" --version; then
	log "etcd v$ETCD_VERSION present"
else
	log "building etcd v$ETCD_VERSION (about a minute)"
	start=$SECONDS
	(cd "$root/hack/tools/etcd" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/etcd.tmp" go.etcd.io/etcd/server/v3)
	mv "$dir/etcd.tmp" "$dir/etcd"
	log "built etcd in $((SECONDS - start))s"
fi
build_k8s kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "about 10 minutes on 2 cores the first time"
build_k8s kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "about 2 minutes after kube-apiserver"
build_k8s kubectl k8s.io/kubernetes/cmd/kubectl "under a minute after kube-apiserver"
echo "$dir"
