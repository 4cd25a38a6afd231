# kube-annotator — run `make help` for the targets.

SHELL := /usr/bin/env bash
# The Kubernetes version of the control plane the tests run on: the newest
# for every target but test-compat. hack/envtest-assets.sh and test/harness
# read it too (test/harness: NewestK8sVersion when unset).
export K8S_VERSION := 1.37.2
# The older versions test-compat runs the end-to-end suite on.
COMPAT_VERSIONS ?= 1.35.4 1.36.3
# Which end-to-end tests test-compat runs: all, or versioned, those whose
# behaviour depends on the server's version (admission policies, sharding,
# the seed scenario with kube-controller-manager, rbac and deploy/ applied).
COMPAT_TESTS ?= all
COMPAT_VERSIONED := ^(TestAdmission.*|TestRecordedCreator|TestPodTemplates|TestExampleSafeToEvict|TestIfAbsent|TestCEL|TestDefaults|TestShardedRun.*|TestSeedScenario|TestRBAC.*|TestCheck|TestDeployApplies)$$
# Where the control-plane binaries are cached, outside the clone so that
# every clone reuses them. hack/envtest-assets.sh and test/harness read it too.
export KUBE_ANNOTATOR_ASSETS ?= $(HOME)/.cache/kube-annotator/k8s-v$(K8S_VERSION)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# The commit and its time: `version` prints them, and a release's build date
# is its commit's (SOURCE_DATE_EPOCH), so that two builds are identical.
COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH
BUILD_DATE := $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG := github.com/kube-annotator/kube-annotator/pkg/version
LDFLAGS := -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Commit=$(COMMIT) -X $(VERSION_PKG).Date=$(BUILD_DATE)
RULES ?= rules.yaml
PREFIX ?= /usr/local
# go test flags for the end-to-end suite, e.g. GOTESTFLAGS=-v.
GOTESTFLAGS ?=

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help
	@# Colour only on a terminal, not into a pipe or a file.
	@if [ -t 1 ]; then on='\033[36m' off='\033[0m'; fi; \
	awk -v on="$$on" -v off="$$off" 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %s%-16s%s %s\n", on, $$1, off, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/kube-annotator
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/kube-annotator .

.PHONY: install-plugin
install-plugin: build ## Install as PREFIX/bin/kubectl-annotator (PREFIX=/usr/local) for `kubectl annotator`, with kubectl_complete-annotator for its completion
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 bin/kube-annotator $(DESTDIR)$(PREFIX)/bin/kubectl-annotator
	install -m 0755 deploy/krew/kubectl_complete-annotator $(DESTDIR)$(PREFIX)/bin/kubectl_complete-annotator

# goreleaser and cyclonedx-gomod, built from the versions pinned in
# hack/tools/goreleaser/go.mod.
TOOLS := $(CURDIR)/bin/tools
.PHONY: release-tools
release-tools:
	cd hack/tools/goreleaser && go build -o $(TOOLS)/ github.com/goreleaser/goreleaser/v2 github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod

IMAGE_REPO ?= ghcr.io/kube-annotator/kube-annotator
.PHONY: release
release: release-tools ## Build release VERSION=vX.Y.Z into dist/: plugin archives, image (OCI index), install.yaml, Helm chart, krew manifest, SBOMs, checksums (docs/release.md)
	VERSION=$(VERSION) IMAGE_REPO=$(IMAGE_REPO) TOOLS=$(TOOLS) hack/release.sh

.PHONY: release-verify
release-verify: release-tools ## Build the release twice (dist/, build/verify/dist) and check the bytes are identical (RELEASE_VERIFY_COLD=1: second from an empty build cache)
	IMAGE_REPO=$(IMAGE_REPO) TOOLS=$(TOOLS) hack/release-verify.sh

IMAGE ?= kube-annotator:$(VERSION)
ARCH ?= amd64
.PHONY: image
image: ## Build the container image for ARCH into dist/kube-annotator-image.tar (OCI layout; no container engine needed)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(ARCH) go build -trimpath -ldflags '$(LDFLAGS) -s -w' -o bin/linux_$(ARCH)/kube-annotator .
	cd hack/tools/image && go run . build --binary linux/$(ARCH)=$(CURDIR)/bin/linux_$(ARCH)/kube-annotator --tag $(IMAGE) \
		--version $(VERSION) --revision $(COMMIT) --out $(CURDIR)/dist/kube-annotator-image.tar

.PHONY: image-verify
image-verify: image ## Check that the image runs as non-root and that its entrypoint runs `version`
	cd hack/tools/image && go run . verify --image $(CURDIR)/dist/kube-annotator-image.tar

.PHONY: install-yaml
install-yaml: ## Render deploy/ into dist/install.yaml with the image IMAGE=REGISTRY/kube-annotator:TAG (no kustomize binary needed)
	cd hack/tools/render && go run . --dir $(CURDIR)/deploy --image $(IMAGE) --out $(CURDIR)/dist/install.yaml \
		--header 'kube-annotator $(VERSION), image $(IMAGE): kubectl apply --server-side -f install.yaml'

.PHONY: run
run: ## Run the controller against your current kubeconfig (RULES=rules.yaml)
	go run -ldflags '$(LDFLAGS)' . run --rules $(RULES)

.PHONY: demo
demo: build envtest-assets ## Local control plane + the controller with rules.yaml: a Deployment, its ReplicaSet and Pods, a Frigate, annotated (Ctrl-C stops)
	@go build -o bin/demo ./test/demo
	@bin/demo --binary bin/kube-annotator --rules $(RULES)

.PHONY: envtest-assets
envtest-assets: ## Build etcd, kube-apiserver, kube-controller-manager, kubectl of K8S_VERSION into ~/.cache/kube-annotator (once: ~10 min cold)
	@hack/envtest-assets.sh >/dev/null

.PHONY: lint
lint: ## gofmt and go vet (the Helm chart's test module too)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	cd test/chart && go vet ./...

.PHONY: test
test: lint test-unit test-e2e ## Run every test: unit, then end to end on a real control plane

.PHONY: test-unit
test-unit: ## Unit tests (race detector)
	go test -race -count=1 ./pkg/... .

.PHONY: test-e2e
test-e2e: envtest-assets ## End-to-end tests on etcd + kube-apiserver (race detector)
	go test -race -count=1 -timeout 25m -skip '^(TestFault|TestSoak)' $(GOTESTFLAGS) ./test/...

.PHONY: test-compat
test-compat: ## The end-to-end suite (as test-e2e, but without the race detector, which test-e2e runs on the newest version) on each of COMPAT_VERSIONS, all at once, each on its own control plane; a feature a version lacks is tested degraded (COMPAT_TESTS=versioned: only the tests that depend on the version; cold: builds their control planes)
	@case "$(COMPAT_TESTS)" in all) run=;; versioned) run='$(COMPAT_VERSIONED)';; \
		*) echo "COMPAT_TESTS=$(COMPAT_TESTS): want all or versioned" >&2; exit 2;; esac; \
	for v in $(COMPAT_VERSIONS); do \
		K8S_VERSION=$$v KUBE_ANNOTATOR_ASSETS=$(HOME)/.cache/kube-annotator/k8s-v$$v hack/envtest-assets.sh >/dev/null || exit 1; \
	done; \
	logs=$$(mktemp -d); trap 'rm -rf "$$logs"' EXIT; \
	echo "test-compat: Kubernetes $(COMPAT_VERSIONS) at once, $(COMPAT_TESTS) tests"; \
	for v in $(COMPAT_VERSIONS); do ( \
		start=$$SECONDS; \
		K8S_VERSION=$$v KUBE_ANNOTATOR_ASSETS=$(HOME)/.cache/kube-annotator/k8s-v$$v go test -count=1 -timeout 25m -skip '^(TestFault|TestSoak)' $${run:+-run "$$run"} -v $(GOTESTFLAGS) ./test/e2e >"$$logs/$$v" 2>&1; \
		echo "$$? $$((SECONDS - start))" >"$$logs/$$v.end" ) & \
	done; \
	wait; failed=; for v in $(COMPAT_VERSIONS); do \
		read -r code took <"$$logs/$$v.end"; \
		echo "test-compat: Kubernetes $$v, $(COMPAT_TESTS) tests"; \
		grep -E '^ *--- |^(ok|FAIL|PASS|e2e: )|_test\.go:[0-9]+: |^ +process\.go:[0-9]+: |^        ' "$$logs/$$v"; \
		[ "$$code" = 0 ] || failed="$$failed $$v"; \
		echo "test-compat: Kubernetes $$v took $${took}s"; \
	done; \
	if [ -n "$$failed" ]; then echo "test-compat: failed on Kubernetes$$failed"; exit 1; fi

.PHONY: test-faults
test-faults: envtest-assets ## The fault suite: API server outage, recovery from it at the client's rate, and restart, watch expiry, deletions, concurrent writer, throttling, SIGTERM, and the chaos soak with all of them at once
	set -o pipefail; go test -count=1 -p 1 -timeout 20m -run '^(TestFault|TestSoak)' -v $(GOTESTFLAGS) ./test/e2e ./test/soak | grep -E '^(=== RUN|--- |ok|FAIL|PASS)|^ +(faults|soak)_[a-z_]*test\.go'

.PHONY: soak
soak: envtest-assets ## The chaos soak alone (part of test-faults): every fault at once over 10,000 objects (~3 min; KUBE_ANNOTATOR_SOAK_SEED=<seed> replays a schedule)
	set -o pipefail; go test -count=1 -timeout 10m -run '^TestSoakChaos$$' -v $(GOTESTFLAGS) ./test/soak | grep -E '^(=== RUN|--- |ok|FAIL|PASS)|^ +soak_[a-z_]*test\.go'

BENCHFLAGS ?=
.PHONY: bench
bench: build envtest-assets ## Benchmark against the raw PATCH loop and a controller-runtime runner on a local control plane (BENCHFLAGS=--objects 100000 …; --owners 5000: relabel one Deployment of 5,000 Pods)
	go run ./test/bench --binary bin/kube-annotator $(BENCHFLAGS)

TARGETS_OBJECTS ?= 300000
.PHONY: bench-targets
bench-targets: build envtest-assets ## The CPU, throughput, memory and related-object targets of docs/performance.md, each from one run of 3 rounds (~4 h on 2 cores): the five runners (kube-annotator also as deploy/ runs it, GOMEMLIMIT 256 MiB) on 10,000 small and realistic objects, memory after converging 10,000 and TARGETS_OBJECTS small objects, and related objects per sync
	go run ./test/bench --binary bin/kube-annotator --realistic --objects 10000 --rounds 3 --latency 0 \
		--runners raw,raw-metadata,raw-metadata-watch,controller-runtime,kube-annotator,deployed --variant deployed=,GOMEMLIMIT=268435456
	go run ./test/bench --binary bin/kube-annotator --objects 10000 --rounds 3 --latency 0 --memory-window 5s --runners converge --variant converge=,--resync-period=0 \
		--timeout 3h --clients 32 --etcd-quota-bytes 17179869184
	go run ./test/bench --binary bin/kube-annotator --objects $(TARGETS_OBJECTS) --rounds 3 --latency 0 --memory-window 5s --runners converge --variant converge=,--resync-period=0 \
		--timeout 3h --clients 32 --etcd-quota-bytes 17179869184
	go test ./pkg/controller -run - -bench '^Benchmark(OwnerChain|RefSource)$$' -benchtime 20000x -count 3

.PHONY: bench-docs
bench-docs: bench-targets ## Every table of docs/performance.md, one command after another (~7 h on 2 cores): bench-targets, then memory for sizing, admission, CEL, sharding, restarts, owners, 300,000 objects and reports
	go run ./test/bench --binary bin/kube-annotator --realistic --objects 10000 --rounds 0 --latency 0 --memory-window 5s --memory-objects 100000 --gomemlimit 268435456
	go run ./test/bench --binary bin/kube-annotator --objects 10000 --rounds 0
	go test ./pkg/controller -run - -bench '^Benchmark(SyncDecide|SyncDecideUnseen|CachedDeploymentHeap)$$' -count 5
	go run ./test/bench --binary bin/kube-annotator --shards 3 --objects 10000 --rounds 3
	go test ./pkg/controller -run XXX -bench RestartConverged -benchtime 5x
	go run ./test/bench --binary bin/kube-annotator --owners 5000 --rounds 3
	go run ./test/bench --binary bin/kube-annotator --shards 3 --setups single,static --reshard=false --objects 300000 --rounds 1 --latency 0 \
		--timeout 3h --clients 32 --etcd-quota-bytes 17179869184
	KUBE_ANNOTATOR_REPORTS_SCALE=10000 go test -count=1 -run '^TestReportsScale$$' -v ./test/e2e
	go test ./pkg/reports -run - -bench Reports

SCALE_OBJECTS ?= 300000
.PHONY: bench-scale
bench-scale: build envtest-assets ## Measure 1 replica, 3 static shards and a group at SCALE_OBJECTS small objects, on a quiet machine (at 300k on 2 cores: ~2.5 h; BENCHFLAGS='--setups single,static --reshard=false': ~1 h)
	go run ./test/bench --binary bin/kube-annotator --shards 3 --objects $(SCALE_OBJECTS) --rounds 1 --latency 0 --timeout 3h --clients 32 --etcd-quota-bytes 17179869184 $(BENCHFLAGS)

FUZZTIME ?= 60s
.PHONY: fuzz
fuzz: ## Fuzz the rules parser and compiler and the desired-state computation, FUZZTIME per target (not part of make test)
	go test ./pkg/rules -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./pkg/rules -run '^$$' -fuzz '^FuzzCompile$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./pkg/patch -run '^$$' -fuzz '^FuzzPlan$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s

.PHONY: manifests
manifests: envtest-assets ## Regenerate deploy/rbac.yaml and deploy/rules.yaml from rules.yaml (on a local control plane)
	go test -count=1 ./test/e2e -run TestDeployMatchesRules -update

.PHONY: builtin-schemas
builtin-schemas: envtest-assets ## Regenerate pkg/staticdiscovery's copy of the built-in resources' OpenAPI v3 schemas, which offline commands type-check CEL against, from a local control plane with every API enabled
	go test -count=1 ./test/e2e -run '^TestBuiltInSchemas$$' -update

CHART_DIR := deploy/chart/kube-annotator
.PHONY: test-chart
test-chart: envtest-assets ## The Helm chart (own module test/chart): helm lint, every ci/ values file accepted by the API server, RBAC equal to `rbac`'s, install, upgrade, uninstall
	cd test/chart && go test -count=1 -timeout 15m $(GOTESTFLAGS) .

.PHONY: chart-resources
chart-resources: envtest-assets ## Regenerate the chart's table of resource names, $(CHART_DIR)/files/resources.yaml, from a local control plane's discovery
	cd test/chart && go test -count=1 -run '^TestResourcesTable$$' . -update

# The date of every file in the chart's archive: SOURCE_DATE_EPOCH, else the
# last commit that changed the chart.
CHART_MTIME ?= $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct -- $(CHART_DIR) 2>/dev/null),0)
.PHONY: chart-package
chart-package: ## Package the Helm chart into dist/kube-annotator-<version>.tgz, the same bytes for the same sources (VERSION=vX.Y.Z gives chart X.Y.Z)
	cd test/chart && go run ./cmd/chart-package --version '$(VERSION)' --mtime '$(CHART_MTIME)' --out '$(or $(CHART_DIST),$(CURDIR)/dist)' \
		--image-repo '$(IMAGE_REPO)' --image-digest '$(IMAGE_DIGEST)'

.PHONY: crd
crd: ## Regenerate deploy/crd with Kubebuilder and controller-gen
	hack/gen-crd.sh
