#!/bin/bash
# Build the carried data folder for a lent GPU machine (docs/GPU.md), here, before the call:
# .gpu/data holds the training text of the sources named and dev2012, git-ignored, and the
# tree plus it must stay under the 64 MiB that a call carries.
#
#   bash scripts/gpu_prepare.sh                       # the sources of recipes/en-accurate-gpu2*.toml
#   bash scripts/gpu_prepare.sh ted_talks earnings21  # others
#
# It prints the sizes and fails (exit 1) when the total would not travel.
set -euo pipefail
DATA=${DATA:-../shared/data}
SOURCES=("$@")
[ ${#SOURCES[@]} -gt 0 ] || SOURCES=(ted_talks qmsum_meetings earnings22 earnings21 coraal_multi_rev)
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude
rm -rf .gpu/data && mkdir -p .gpu/data/text .gpu/data/iwslt2011
for source in "${SOURCES[@]}"; do
    [ -d "$DATA/text/$source" ] || { echo "no such source: $DATA/text/$source" >&2; exit 1; }
    mkdir -p ".gpu/data/text/$source" && cp "$DATA/text/$source/"*.txt.gz ".gpu/data/text/$source/"
done
cp "$DATA/iwslt2011/dev2012.gz" .gpu/data/iwslt2011/
carried=$(du -sb .gpu | cut -f1)
tracked=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s}')
total=$((carried + tracked))
limit=$((64 * 1024 * 1024))
awk -v c="$carried" -v t="$tracked" -v s="$total" -v l="$limit" 'BEGIN {
    printf "carried %.2f MiB + tracked %.2f MiB = %.2f MiB (limit %.0f MiB)\n",
        c / 2^20, t / 2^20, s / 2^20, l / 2^20 }'
[ "$total" -lt "$limit" ] || { echo "too large to carry: drop a source" >&2; exit 1; }
