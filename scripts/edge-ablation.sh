#!/usr/bin/env bash
# What one piece of the admitted path costs: `npm run bench:edge -- --only tenants` with, beside this commit's
# spillway Worker, the same commit with one ablation patch applied (src/bench/edge/ablations/NAME.patch), in the
# same interleaved rounds. An ablation removes something spillway needs (the router, the buffered answer): it is
# a measurement, never a configuration. Uses HEAD, not uncommitted changes.
#
#   scripts/edge-ablation.sh no-router --requests 12000 --rounds 20
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/edge-ablation.sh NAME [bench:edge flags]; NAME one of: $(ls src/bench/edge/ablations | sed 's/\.patch$//' | tr '\n' ' ')}
shift
patch="$PWD/src/bench/edge/ablations/$name.patch"
[ -f "$patch" ] || { echo "no ablation named $name" >&2; exit 2; }
tree=$(mktemp -d /tmp/spillway-ablation.XXXXXX)
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"' EXIT
git worktree add --detach --force "$tree" HEAD >/dev/null
git -C "$tree" apply "$patch"
ln -s "$PWD/node_modules" "$tree/node_modules"
node_modules/.bin/tsc -p "$tree/tsconfig.worker.json" --noEmit
npm run bench:edge -- --only tenants --before "$tree" --label "$name" "$@"
