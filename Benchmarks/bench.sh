#!/usr/bin/env bash
# `make bench`: Shoal's storage engine against LMDB and SQLite on the same data, Shoal's object
# layer against GRDB on the same objects, the object layer's cross-process notifications and
# freeze(), what one log call costs (disabled and enabled), encrypted Shoal against plain
# Shoal, and sync through a private PostgreSQL (latency, upload and bootstrap), in one run,
# printed as six tables (see Benchmarks/StorageBenchmarks/StorageBenchmarks.swift and CrossProcess.swift,
# Benchmarks/ObjectBenchmarks/, Benchmarks/NotificationBenchmarks/ and
# Benchmarks/LoggingBenchmarks/ for the workloads).
# Takes a few minutes. Extra arguments go to the benchmark tool, e.g.
#   bash Benchmarks/bench.sh --filter 'point-reads.*'   (a regex the whole name must match)
#   bash Benchmarks/bench.sh --target ObjectBenchmarks  (only the object layer against GRDB)
#   bash Benchmarks/bench.sh --target NotificationBenchmarks  (only notifications and freeze)
#   bash Benchmarks/bench.sh --target LoggingBenchmarks  (only the log calls, about 30 s once built)
#   bash Benchmarks/bench.sh --target SyncBenchmarks  (only sync through the private PostgreSQL)
# Databases, logs and the raw export go to $SHOAL_BENCH_DIR (default /tmp/shoal-bench); the
# databases are removed at the end, the logs and export are kept. The benchmarks write what the
# export does not hold to $SHOAL_BENCH_DIR/results: file sizes (filesize-<engine>.txt after the
# bulk loads, filesize-objects-<shoal|grdb>.txt after the object inserts, GRDB's WAL
# checkpointed first), the interleaved durable commits' times per iteration
# (durable-interleaved.txt), the contended commits' (contended-interleaved[-loaded].txt: the
# engines' writer processes in turn), the object reads on the encrypted and the plain file interleaved
# (objects-encryption-interleaved.txt) and the notification benchmarks' counts (notify-*.txt).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export SHOAL_BENCH_DIR="${SHOAL_BENCH_DIR:-/tmp/shoal-bench}"
dir="$SHOAL_BENCH_DIR"
rm -rf "$dir/fixtures" "$dir/work" "$dir/results" "$dir/out"
mkdir -p "$dir/out" "$dir/results"

# SwiftPM can keep a stale build plan after the root package's manifest changes (seen: a new
# dependency of ShoalStorage -> "missing required module"); dropping it only re-plans.
rm -f "$here/.build/release.yaml" "$here/.build/"*/release/description.json

# bench-peer: the other processes of the cross-process benchmarks, which look for it next to
# the benchmark executable (the plugin builds into the same folder).
echo "bench: building bench-table and bench-peer (log: $dir/build.log)"
if ! { swift build --package-path "$here" -c release --product bench-table &&
  swift build --package-path "$here" -c release --product bench-peer; } >"$dir/build.log" 2>&1; then
  tail -n 40 "$dir/build.log"
  exit 1
fi
bin="$(swift build --package-path "$here" -c release --show-bin-path)"

# The sync benchmarks' PostgreSQL: a private cluster on loopback (scripts/postgres.sh installs
# Debian's postgresql when missing), stopped when this script ends.
pgdir="$dir/pg"
if ! bash "$here/../scripts/postgres.sh" start "$pgdir" >"$dir/pg.log" 2>&1; then
  cat "$dir/pg.log"
  exit 1
fi
trap 'bash "$here/../scripts/postgres.sh" stop "$pgdir" >/dev/null 2>&1 || true' EXIT
export SHOAL_BENCH_PG_URL="$(cat "$pgdir/url")"

echo "bench: building and running the benchmarks, a few minutes (log: $dir/run.log)"
load_before="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
status=0
swift package --package-path "$here" benchmark --format influx --path "$dir/out" --no-progress "$@" \
  >"$dir/run.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "bench: the benchmark run failed (exit $status); the end of $dir/run.log:"
  tail -n 40 "$dir/run.log"
elif grep -q "benchmarks failed" "$dir/run.log"; then
  # A benchmark whose setup throws or that reports an error fails alone, and the tool exits 0.
  echo "bench: some benchmarks failed; from $dir/run.log:"
  grep -v "runtime interposer\|LD_PRELOAD" "$dir/run.log" | grep -A 2 "failed" | head -n 40
fi

csv="$(ls "$dir"/out/*.influx.csv 2>/dev/null | head -n 1 || true)"
if [ -z "$csv" ]; then
  echo "bench: no results were exported to $dir/out; the end of $dir/run.log:"
  [ "$status" -ne 0 ] || tail -n 20 "$dir/run.log"
  exit 1
fi
table_status=0
"$bin/bench-table" "$csv" "$dir/results" || table_status=$?
[ "$status" -ne 0 ] || status=$table_status
load_after="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
echo "Load average before/after the run: $load_before / $load_after on $(nproc) cores (other work on the machine skews the figures)."

rm -rf "$dir/fixtures" "$dir/work"
exit "$status"
