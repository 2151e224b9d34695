#!/usr/bin/env bash
# Re-record the real pytest/Hypothesis outputs in gate/recorded/ that the
# freezegate tests use as fixtures. Run from anywhere:
#
#   bash examples/pytest-demo/record.sh
#
# Uses the pinned venv from .ci/python-env. The frozen ids come from the
# freezegate binary ($FREEZEGATE or on PATH) when there is one, else straight
# from the ledger's test_ids (what `freezegate skips` derives).
set -euo pipefail

DEMO="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$DEMO/../.." && pwd)"
bash "$ROOT/.ci/python-env"
PY="${FREEZEGATE_VENV:-$ROOT/.venv}/bin/python"

cd "$DEMO"
OUT=gate/recorded
rm -rf "$OUT" .hypothesis/observed gate/skipped.json
mkdir -p "$OUT/observed"

if [ -z "${FREEZEGATE_SKIPS_FILE:-}" ] && [ -z "${FREEZEGATE:-}" ] && ! command -v freezegate >/dev/null; then
    tmp="$(mktemp)"
    trap 'rm -f "$tmp"' EXIT
    "$PY" -c 'import json,sys; print(json.dumps([f["test_id"] for f in json.load(open(sys.argv[1]))["freezes"]]))' \
        gate/freeze_ledger.json > "$tmp"
    export FREEZEGATE_SKIPS_FILE="$tmp"
fi

# 1. collection, as `freezegate check --collect` would see it
"$PY" -m pytest --collect-only -q --no-header > "$OUT/collected.txt"

# 2. full run with Hypothesis observability (writes .hypothesis/observed/)
HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY=1 \
    "$PY" -m pytest -q --no-header -p no:cacheprovider --junitxml "$OUT/junit.xml"

cp .hypothesis/observed/*_testcases.jsonl "$OUT/observed/"
cp gate/skipped.json "$OUT/skipped.json"

# 3. the patch that added the freeze, repo-root-relative
cat > "$OUT/changed.txt" <<'CHANGED'
examples/pytest-demo/gate/freeze_ledger.json
examples/pytest-demo/tests/props/test_proration_props.py
examples/pytest-demo/tests/test_billing.py
CHANGED
