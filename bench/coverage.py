#!/usr/bin/env python3
"""Generate a deterministic coverage.py JSON report with test contexts, for measuring
how long `freezegate check --coverage` takes to load one.

    python3 bench/coverage.py target/bench/coverage.json [LINES] [CONTEXTS] [MEAN]

Defaults: 100,000 executed lines in 500 files, 1,000 test contexts (pytest-cov's
`<node id>|run`, a few `|setup`, parametrized ids), each line run by MEAN (default 10)
tests on average: most lines by a few, one line in a hundred by hundreds (shared helpers).
Like coverage.py's own output, every file repeats its contexts under `functions` and
`classes`, so the parser has to skip two copies for every one it reads.
"""
import json
import random
import sys


def main():
    out = sys.argv[1]
    n_lines = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    n_contexts = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000
    mean = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
    rng = random.Random(20261130)
    tests = []
    for i in range(n_contexts):
        node = f"tests/pkg{i % 20}/test_mod{i // 10}.py::test_case_{i}"
        if i % 7 == 0:
            node += f"[param-{i % 13}-é]"
        tests.append(node)
    files_n = 500
    per_file = n_lines // files_n
    files = {}
    total = 0
    for f in range(files_n):
        path = f"src/app/pkg{f % 20}/module_{f}.py"
        contexts = {}
        for line in range(1, per_file + 1):
            if rng.random() < 0.01:
                k = rng.randint(100, 500)
            else:
                k = 1 + int(rng.expovariate(1 / max(mean - 4, 0.5)))
            k = min(k, n_contexts)
            chosen = rng.sample(tests, k)
            ctx = [t + ("|setup" if rng.random() < 0.02 else "|run") for t in chosen]
            if line % 50 == 1:
                ctx.append("")
            contexts[str(line)] = ctx
            total += len(ctx)
        section = {"executed_lines": list(range(1, per_file + 1)), "contexts": contexts}
        files[path] = {
            "executed_lines": list(range(1, per_file + 1)),
            "summary": {"covered_lines": per_file, "num_statements": per_file},
            "missing_lines": [],
            "excluded_lines": [],
            "contexts": contexts,
            "functions": {"": section},
            "classes": {"": section},
        }
    report = {
        "meta": {"format": 3, "version": "7.17.5", "branch_coverage": False, "show_contexts": True},
        "files": files,
        "totals": {"covered_lines": n_lines},
    }
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(report, fh, ensure_ascii=False)
    print(f"{out}: {files_n * per_file} lines, {n_contexts} contexts, {total} line-context pairs", file=sys.stderr)


if __name__ == "__main__":
    main()
