#!/usr/bin/env bash
# Runs the gate on the demo's recordings, at the commit they were made of:
#
#   bash examples/pytest-demo/replay.sh [PATCH] [CHECK OPTIONS...]
#
# PATCH is `freeze` (the default: the patch that freezes test_proration_rounding, which
# passes), `inline-skip` (the same patch, a test skipped inline: FZ601) or
# `hollow-deposit` (the freeze with a property that asserts nothing: FZ210). It rebuilds
# the demo's history (scenario.sh) in a temporary directory, checks PATCH out and runs
# there, as CI would on that commit:
#
#   freezegate check --base base --trusted-ref base --run <PATCH's run record>
#       --base-run <base's run record> [--proof <PATCH's proof record>] --today 2026-11-30
#
# with the records of gate/recorded/ (record.sh writes them). Needs git; the binary is
# $FREEZEGATE, else this repository's, built by `cargo run --release`.
set -euo pipefail

DEMO="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$DEMO/../.." && pwd)"
PATCH="freeze"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    PATCH="$1"
    shift
fi
case "$PATCH" in
    freeze | inline-skip | hollow-deposit) ;;
    *) echo "replay.sh: no recorded patch \`$PATCH\` (freeze, inline-skip, hollow-deposit)" >&2; exit 2 ;;
esac
if [ -n "${FREEZEGATE:-}" ]; then
    GATE=("$FREEZEGATE")
else
    GATE=(cargo run --release --quiet --manifest-path "$ROOT/Cargo.toml" --)
fi

SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
bash "$DEMO/scenario.sh" "$SCRATCH/repo"
cd "$SCRATCH/repo/examples/pytest-demo"
git checkout -q "$PATCH"
mkdir -p gate/recorded
cp -R "$DEMO/gate/recorded/base" "$DEMO/gate/recorded/$PATCH" gate/recorded/

ARGS=(check --base base --trusted-ref base
    --run "gate/recorded/$PATCH/run.json" --base-run gate/recorded/base/run.json)
[ -f "gate/recorded/$PATCH/proof.json" ] && ARGS+=(--proof "gate/recorded/$PATCH/proof.json")
# The date the recordings were made, unless the caller gives another.
case " $* " in
    *" --today "* | *" --today="*) ;;
    *) ARGS+=(--today 2026-11-30) ;;
esac
ARGS+=("$@")
echo "\$ freezegate ${ARGS[*]}    # in examples/pytest-demo at \`$PATCH\` ($(git rev-parse --short HEAD))"
echo
status=0
"${GATE[@]}" "${ARGS[@]}" || status=$?
exit "$status"
