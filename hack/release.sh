#!/usr/bin/env bash
# Builds a release of kube-annotator into dist/ (make release VERSION=vX.Y.Z):
# the kubectl plugin archives, the binaries' SBOMs and the krew manifest
# (goreleaser, .goreleaser.yaml), the container image for linux/amd64 and
# linux/arm64 as one OCI index, its digest and SBOM (hack/tools/image),
# install.yaml with the image pinned by tag and digest (hack/tools/render),
# the Helm chart when deploy/chart has one, and checksums.txt. The same
# commit gives the same bytes: every timestamp is the commit's
# (SOURCE_DATE_EPOCH). See docs/release.md.
#
# Environment: VERSION (required, vX.Y.Z), IMAGE_REPO (where the image will
# be pushed), TOOLS (directory holding goreleaser and cyclonedx-gomod),
# DIST (default dist), RELEASE_GOCACHE (the Go build cache goreleaser
# compiles with; default the usual one). Intermediate files go to
# build/release.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${VERSION:?VERSION=vX.Y.Z is required}"
if ! [[ $VERSION =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]]; then
	echo "release: VERSION=$VERSION: want a semantic version vX.Y.Z (or vX.Y.Z-PRERELEASE)" >&2
	exit 2
fi
: "${IMAGE_REPO:=ghcr.io/kube-annotator/kube-annotator}"
: "${TOOLS:=$PWD/bin/tools}"
: "${DIST:=dist}"
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
COMMIT=$(git rev-parse HEAD)
export SOURCE_DATE_EPOCH
# Files this process creates get the same modes whatever the caller's umask.
umask 022
if [[ -n $(git status --porcelain --untracked-files=no) ]]; then
	echo "release: warning: the work tree has uncommitted changes; the build is of them, dated by commit $COMMIT" >&2
fi

rm -rf "$DIST" build/release && mkdir -p "$DIST"
DIST=$(cd "$DIST" && pwd)

echo "release: $VERSION of commit $COMMIT ($(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ))"
# goreleaser: the binaries, plugin archives, binary SBOMs and krew manifest.
# It finds cyclonedx-gomod on PATH. The tag need not exist: the release is
# of the commit checked out.
# goreleaser asks git for a remote's URL; a clone without one gets the
# project's, for this run only.
if [[ -z $(git remote) ]]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/kube-annotator/kube-annotator.git
fi
PATH="$TOOLS:$PATH" GORELEASER_CURRENT_TAG="$VERSION" GOCACHE="${RELEASE_GOCACHE:-$(go env GOCACHE)}" \
	"$TOOLS/goreleaser" release --clean --skip=publish,validate,announce --config .goreleaser.yaml
g=$PWD/build/release/goreleaser
cp "$g"/kubectl-annotator_*.tar.gz "$g"/kubectl-annotator_*.cdx.json "$DIST"/
cp "$g/krew/annotator.yaml" "$DIST/annotator.krew.yaml"

# The container image: goreleaser's linux binaries, as /kube-annotator.
bin() { ls "$g"/kubectl-annotator_linux_"$1"*/kubectl-annotator; }
(cd hack/tools/image && go run . build \
	--binary "linux/amd64=$(bin amd64)" --binary "linux/arm64=$(bin arm64)" \
	--tag "$IMAGE_REPO:$VERSION" --version "$VERSION" --revision "$COMMIT" \
	--out "$DIST/kube-annotator-image.tar" --digest-file "$DIST/kube-annotator-image.digest")
(cd hack/tools/image && go run . verify --image "$DIST/kube-annotator-image.tar")
(cd hack/tools/image && go run . sbom --image "$DIST/kube-annotator-image.tar" \
	--bom "linux/amd64=$DIST/kubectl-annotator_linux_amd64.cdx.json" \
	--bom "linux/arm64=$DIST/kubectl-annotator_linux_arm64.cdx.json" \
	--out "$DIST/kube-annotator-image.cdx.json")
digest=$(cat "$DIST/kube-annotator-image.digest")

# install.yaml: deploy/ with the image pinned by tag and digest.
(cd hack/tools/render && go run . --dir ../../../deploy --image "$IMAGE_REPO:$VERSION@$digest" --out "$DIST/install.yaml" \
	--header "kube-annotator $VERSION: kubectl apply --server-side -f install.yaml
Rendered from deploy/ of commit $COMMIT by make release.")

# The Helm chart, when the repository has one.
if [[ -f deploy/chart/kube-annotator/Chart.yaml ]]; then
	make --no-print-directory chart-package VERSION="$VERSION" IMAGE_REPO="$IMAGE_REPO" IMAGE_DIGEST="$digest" CHART_DIST="$DIST"
else
	echo "release: deploy/chart/kube-annotator/Chart.yaml does not exist: no Helm chart in this release" >&2
fi

# One checksums file for every artifact.
(cd "$DIST" && find . -maxdepth 1 -type f ! -name checksums.txt -printf '%f\n' | LC_ALL=C sort | xargs sha256sum >checksums.txt)
echo "release: $VERSION in $DIST:"
(cd "$DIST" && LC_ALL=C ls -l --time-style=+ | awk 'NR > 1 {printf "  %10d  %s\n", $5, $NF}')
echo "release: image $IMAGE_REPO:$VERSION@$digest"
