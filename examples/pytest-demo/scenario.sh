#!/usr/bin/env bash
# Builds the demo's history in a scratch git repository, the same commits on every
# machine (fixed identity and dates), so the run and proof records in gate/recorded/
# name commits anyone can rebuild:
#
#   bash examples/pytest-demo/scenario.sh DIR
#
# DIR gets examples/pytest-demo/ (the project only: billing/, tests/, the conftest,
# pyproject.toml, freezegate.toml and the ledger) and four tags:
#
#   base            the project before the patch: no freeze, the old rounding test
#   freeze          base + patches/freeze.diff: the patch under review (the shipped demo)
#   inline-skip     freeze + patches/inline-skip.diff: a test skipped inline
#   hollow-deposit  base + freeze.diff + hollow-deposit.diff in one commit: the same
#                   freeze, its property calling the code and asserting nothing
#
# It leaves the scratch repository at `freeze`. record.sh records there; replay.sh
# checks there.
set -euo pipefail

DEMO="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$DEMO/../.." && pwd)"
DIR="${1:?usage: scenario.sh DIR}"
PROJECT=(billing tests conftest.py pyproject.toml freezegate.toml gate/freeze_ledger.json)

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
[ -z "$(ls -A "$DIR")" ] || { echo "scenario.sh: $DIR is not empty" >&2; exit 2; }

# The project's tracked files as they are in this working tree.
(cd "$DEMO" && git ls-files -z -- "${PROJECT[@]}") \
    | (cd "$DEMO" && xargs -0 tar cf - --) \
    | (mkdir -p "$DIR/examples/pytest-demo" && cd "$DIR/examples/pytest-demo" && tar xf -)
find "$DIR/examples" -type f -exec chmod 644 {} +

# The same commits everywhere: a fixed identity and date, none of the caller's config.
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
export GIT_AUTHOR_NAME="freezegate demo" GIT_AUTHOR_EMAIL="demo@freezegate.invalid"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export GIT_AUTHOR_DATE="2026-11-23T09:00:00+00:00" GIT_COMMITTER_DATE="2026-11-23T09:00:00+00:00"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git_() { git -C "$DIR" -c core.autocrlf=false -c commit.gpgsign=false -c init.defaultBranch=main "$@"; }

git_ init -q
git_ apply -R "$DEMO/patches/freeze.diff"
git_ add -A
git_ commit -q -m "base: proration rounds half-up"
git_ tag base

git_ apply "$DEMO/patches/freeze.diff"
git_ commit -q -a -m "Freeze test_proration_rounding (BILL-412), deposit test_monotonic_in_period"
git_ tag freeze

git_ apply "$DEMO/patches/inline-skip.diff"
git_ commit -q -a -m "Skip test_prorate_zero_days_is_free inline"
git_ tag inline-skip

git_ checkout -q base
git_ apply "$DEMO/patches/freeze.diff"
git_ apply "$DEMO/patches/hollow-deposit.diff"
git_ commit -q -a -m "Freeze test_proration_rounding (BILL-412), deposit a property that asserts nothing"
git_ tag hollow-deposit

git_ checkout -q freeze
