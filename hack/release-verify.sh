#!/usr/bin/env bash
# Builds the release twice and compares the two byte for byte (make
# release-verify): the first into dist/, the second into build/verify/dist
# with a different temporary directory and, with RELEASE_VERIFY_COLD=1, an
# empty Go build cache, so that nothing but the inputs can make the bytes.
# Prints each artifact with its size and whether the two builds agree.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${VERSION:=v0.0.0-verify}"
export VERSION
second=build/verify/dist
start=$SECONDS

DIST=dist hack/release.sh
first_done=$((SECONDS - start))
rm -rf build/verify && mkdir -p build/verify/tmp
if [[ ${RELEASE_VERIFY_COLD:-} == 1 ]]; then
	export RELEASE_GOCACHE=$PWD/build/verify/gocache
fi
# The second build runs its steps from another directory for temporary files.
DIST=$second TMPDIR=$PWD/build/verify/tmp hack/release.sh
second_done=$((SECONDS - start - first_done))

status=0
echo "release-verify: $VERSION, two builds (${first_done}s, ${second_done}s):"
for f in $( (cd dist && ls; cd "../$second" && ls) | LC_ALL=C sort -u); do
	if cmp -s "dist/$f" "$second/$f"; then
		verdict=identical
	else
		verdict=DIFFERENT status=1
	fi
	printf '  %-44s %10s  %s\n' "$f" "$(stat -c %s "dist/$f" 2>/dev/null || echo missing)" "$verdict"
done
if [[ $status != 0 ]]; then
	echo "release-verify: the two builds differ (compare dist/ with $second/)" >&2
	exit 1
fi
echo "release-verify: the two builds are byte-identical"
