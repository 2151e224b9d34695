#!/usr/bin/env bash
# Re-records gate/recorded/: what freezegate's pytest plugin, `freezegate prove` and the
# fallback conftest hook write for this demo, at the commits scenario.sh rebuilds. Run
# from anywhere:
#
#   bash examples/pytest-demo/record.sh [OUT]       # OUT defaults to gate/recorded
#
# Needs a Python with pytest, Hypothesis, mutmut and this tree's wheel (the plugin and
# its binary) installed: $FREEZEGATE_PYTHON, else the pinned venv of .ci/python-env.
# tests/demo.rs runs this script into a temporary OUT and fails when what it records
# differs from what is committed here.
set -euo pipefail

DEMO="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$DEMO/../.." && pwd)"
OUT="${1:-$DEMO/gate/recorded}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
PY="${FREEZEGATE_PYTHON:-${FREEZEGATE_VENV:-$ROOT/.venv}/bin/python}"
BIN="$(dirname "$PY")/freezegate"
if ! "$PY" -c "import freezegate.plugin, hypothesis, mutmut" 2>/dev/null || [ ! -x "$BIN" ]; then
    cat >&2 <<EOF
record.sh: $PY lacks this tree's wheel (or pytest, Hypothesis, mutmut). From $ROOT:
  bash .ci/python-env && .venv/bin/python -m pip install -r .ci/requirements-packaging.txt
  .venv/bin/python -m maturin build --release --out target/wheels
  .venv/bin/python -m pip install --force-reinstall --no-deps target/wheels/freezegate-*.whl
EOF
    exit 2
fi

SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
bash "$DEMO/scenario.sh" "$SCRATCH/repo"
cd "$SCRATCH/repo/examples/pytest-demo"
# Nothing of the caller's pytest, Hypothesis or freezegate settings.
unset PYTEST_ADDOPTS HYPOTHESIS_PROFILE FREEZEGATE_SKIPS_FILE FREEZEGATE_PLUGIN_OFF
export PYTHONDONTWRITEBYTECODE=1 FREEZEGATE="$BIN"
PYTEST=("$PY" -m pytest -q --no-header -p no:cacheprovider)

# The run record of pytest --freezegate at a tag, into $OUT/<tag>/run.json.
run_at() {
    git checkout -q "$1"
    mkdir -p "$OUT/$1"
    "${PYTEST[@]}" --freezegate >/dev/null
    mv gate/run.json "$OUT/$1/run.json"
}
# The proof of the freeze at a tag against base, into $OUT/<tag>/proof.json.
prove_at() {
    git checkout -q "$1"
    "$BIN" prove --base base --python "$PY" -j 2 >/dev/null
    mv gate/proof.json "$OUT/$1/proof.json"
}

run_at base
run_at freeze
prove_at freeze
run_at inline-skip
prove_at inline-skip
run_at hollow-deposit
prove_at hollow-deposit

# The fallback flow's separate artifacts (conftest.py applies the ledger's skips), at
# the patch under review.
git checkout -q freeze
rm -rf "$OUT/observed" .hypothesis/observed gate/skipped.json
mkdir -p "$OUT/observed"
"${PYTEST[@]}" --collect-only > "$OUT/collected.txt"
HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY=1 "${PYTEST[@]}" --junitxml "$OUT/junit.xml" >/dev/null
cp .hypothesis/observed/*_testcases.jsonl "$OUT/observed/"
cp gate/skipped.json "$OUT/skipped.json"
git diff --name-only base freeze > "$OUT/changed.txt"
