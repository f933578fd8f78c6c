#!/usr/bin/env bash
# Full-size soak (RELIABILITY.md): 10 M events of block churn and 1 M decisions through the relay's event buffer and
# the state, asserting the same bounds and drop counters as the CI test, and recording the memory curve.
#   scripts/soak.sh [EVENTS] [DECISIONS]      (defaults 10000000 1000000; 20 min at nice 10 on a busy 2-core machine)
# The curve goes to soak-curve.jsonl (one {"events","decisions","rssMiB","heapUsedMiB"} line per sample).
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS="${1:-10000000}"
DECISIONS="${2:-1000000}"
CURVE="${KVS_SOAK_CURVE:-$PWD/soak-curve.jsonl}"
: > "$CURVE"
KVS_SOAK_EVENTS="$EVENTS" KVS_SOAK_DECISIONS="$DECISIONS" KVS_SOAK_CURVE="$CURVE" \
  npx vitest run test/reliability/soak.test.ts
echo "memory curve: $CURVE"
node -e '
const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => JSON.parse(l));
const rss = rows.map((r) => r.rssMiB);
console.log("samples", rows.length, "rss MiB min", Math.min(...rss), "max", Math.max(...rss), "last", rss.at(-1));
for (const r of rows) console.log(String(r.events).padStart(9), String(r.decisions).padStart(8), String(r.rssMiB).padStart(5) + " MiB rss", String(r.heapUsedMiB).padStart(5) + " MiB heap");
' "$CURVE"
