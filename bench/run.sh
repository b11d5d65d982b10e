#!/usr/bin/env bash
# Runs the deltavacuum benchmark set (what `make bench` calls) and writes the raw results
# (one JSON line per run), a Markdown summary of the medians and the plot.
#
#   bench/run.sh                 # SCALE=small: ~10 minutes on 2 cores
#   SCALE=full bench/run.sh      # the sizes in docs/benchmarks.md (about an hour, ~6 GB of temp files)
#
# Environment:
#   SCALE      small (default) or full
#   REPS       runs of each case (default 3); cases are interleaved run by run; medians reported
#   OUT        results directory (default .cache/bench/<scale>-<time>); results.jsonl, summary.md, plot png
#   TMPDIR     where the generated tables go (a fresh temporary directory, removed at the end)
#   SKIP       space-separated parts to skip: local dv replay planner gotest deltars spark s3
#              (s3 is the object-store part: S3 and Azure)
#   SPARK      1 to run the Delta Spark baseline at SCALE=small too (it takes ~10 minutes alone:
#              a JVM per run); SCALE=full always runs it
#   PLOT       where to write the plot (default $OUT/time-vs-files.png)
#
# Generated tables live only under a new temporary directory that is removed on exit. The
# deltavacuum and delta-rs runs delete files there, and only there.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"
scale=${SCALE:-small}
reps=${REPS:-3}
skip=" ${SKIP:-} "
out=${OUT:-$repo/.cache/bench/$scale-$(date +%Y%m%dT%H%M%S)}
mkdir -p "$out"
results=$out/results.jsonl
log() { printf 'bench: %s\n' "$*" >&2; }
skipped() { [[ $skip == *" $1 "* ]]; }

case $scale in
small)
	sizes="30000 60000 120000"        # live files of the side-by-side tables (+20 % stale)
	dv_live=50000                     # the table with deletion vectors
	replay="200000 1000000"           # adds in the checkpoint for log replay
	planner="100000 1000000"          # live files for the planner-memory runs (synthetic)
	spark_live=20000                  # the Delta Spark baseline (slow: a JVM per run)
	s3_live=5000                      # object-store runs (objects uploaded to a local server)
	;;
full)
	sizes="100000 300000 1000000"
	dv_live=200000
	replay="1000000 5000000"
	planner="1000000 10000000"
	spark_live=100000
	s3_live=20000
	;;
*) log "SCALE must be small or full"; exit 2 ;;
esac

log "building"
go build -o bin/deltavacuum ./cmd/deltavacuum
go build -o bin/dvbench ./cmd/dvbench

# delta-rs and matplotlib, pinned, in a venv under .cache/ (installed once).
venv=$repo/.cache/bench-venv
py=$venv/bin/python
if ! "$py" -c 'import deltalake, matplotlib' 2>/dev/null; then
	log "installing deltalake and matplotlib into $venv"
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q 'deltalake==1.6.6' 'matplotlib==3.11.2'
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/dvbench.XXXXXX")
trap 'rm -rf "$work"' EXIT
log "scale $scale, $reps runs per case, tables in $work, results in $out"
{
	echo "# machine"
	echo "date: $(date -u +%FT%TZ)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
	echo "memory: $(free -g | awk '/Mem:/{print $2}') GiB"
	echo "kernel: $(uname -r)"
	echo "filesystem: $(df -T "$work" | awk 'NR==2{print $2}')"
	echo "go: $(go version)"
	echo "deltalake: $("$py" -c 'import deltalake; print(deltalake.__version__)')"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/machine.txt"

suite() { bin/dvbench suite -python "$py" -reps "$reps" -out "$results" "$@" | tee -a "$out/suites.txt"; }

# 1. Side by side on local disk, same table, same run: the find + rm floor, deltavacuum
#    (DRY RUN, FULL, LITE) and delta-rs (DRY RUN, FULL). No deletion vectors here: delta-rs
#    1.6.6 deletes the deletion-vector files of live files (see part 2), which would not be the
#    same work.
if ! skipped local; then
	cases=floor,dv-dry,dv-full,dv-lite,deltars-dry,deltars-full
	skipped deltars && cases=floor,dv-dry,dv-full,dv-lite
	for n in $sizes; do
		t=$work/local-$n
		bin/dvbench gen -dir "$t" -live "$n" -tombstones $((n * 3 / 20)) -untracked $((n / 20)) -partitions 100 -dv-fraction 0
		echo "## local-$n" >>"$out/suites.txt"
		suite -table "$t" -label "local-$n" -cases "$cases"
		rm -rf "$t" "$t".*
	done
fi

# 2. A table with deletion vectors (5 % of the files): deltavacuum keeps the live DV files;
#    the suite records it as an error when a run deletes a live file.
if ! skipped dv; then
	t=$work/dv-$dv_live
	bin/dvbench gen -dir "$t" -live "$dv_live" -tombstones $((dv_live * 3 / 20)) -untracked $((dv_live / 20)) -partitions 100 -dv-fraction 0.05
	cases=dv-dry,dv-full,dv-lite
	skipped deltars || cases=$cases,deltars-dry,deltars-full
	echo "## dv-$dv_live" >>"$out/suites.txt"
	suite -table "$t" -label "dv-$dv_live" -cases "$cases" -reps 1 || true
	rm -rf "$t" "$t".*
fi

# 3. Log replay: checkpoint of N adds (5 % with DVs, N/10 tombstones) + 3 JSON commits, no data
#    files; deltavacuum's library (dvbench replay) and delta-rs's DeltaTable load.
if ! skipped replay; then
	for n in $replay; do
		t=$work/replay-$n
		bin/dvbench gen -synthetic -dir "$t" -live "$n" -tombstones $((n / 10)) -untracked 0 -partitions 100 -dv-fraction 0.05 \
			-checkpoint-part-rows 1000000
		cases=replay
		skipped deltars || cases=replay,deltars-load
		echo "## replay-$n" >>"$out/suites.txt"
		suite -table "$t" -label "replay-$n" -cases "$cases"
		rm -rf "$t" "$t".*
	done
fi

# 4. Planner memory on bench/synthetic: N live files, 20 k to delete at every size; at the
#    first size also the inventory vacuum (a Parquet inventory of every file instead of a
#    listing).
if ! skipped planner; then
	first=1
	for n in $planner; do
		t=$work/planner-$n
		cases=plan-synthetic
		if [[ $first == 1 ]]; then
			bin/dvbench gen -synthetic -inventory -dir "$t" -live "$n" -tombstones 10000 -untracked 10000 -partitions 100 -dv-fraction 0.05
			cases=plan-synthetic,plan-inventory
			first=0
		else
			bin/dvbench gen -synthetic -dir "$t" -live "$n" -tombstones 10000 -untracked 10000 -partitions 100 -dv-fraction 0.05 \
				-checkpoint-part-rows 1000000
		fi
		echo "## planner-$n" >>"$out/suites.txt"
		suite -table "$t" -label "planner-$n" -cases "$cases"
		rm -rf "$t" "$t".*
	done
fi

# 5. The go test benchmarks (log replay and planner heap per live file, in-process).
if ! skipped gotest; then
	DVBENCH_SCALE=$scale TMPDIR=$work go test -run '^$' -bench 'LogReplay|PlannerMemory|KeySetMemory' -benchtime 1x \
		-timeout 60m ./bench/ | tee "$out/gotest.txt"
	# Micro-benchmarks behind the recommendations in docs/scaling.md (per-path check, set
	# lookup, stat and delete system calls).
	TMPDIR=$work go test -run '^$' -bench 'PathCheck|KeySetLookup|Stat$|Delete$' -count 3 ./bench/ | tee -a "$out/gotest.txt"
fi

# 6. Delta Spark's VACUUM (local[2], one JVM per run) beside deltavacuum and the floor, on a
#    smaller table. Uses the PySpark environment of conformance/ (.cache/conformance-venv).
if [[ $scale == small && ${SPARK:-0} != 1 ]]; then
	log "skipped: Delta Spark baseline at SCALE=small (set SPARK=1)"
elif ! skipped spark; then
	if [[ -x conformance/setup.sh && ! -x .cache/conformance-venv/bin/python ]]; then
		conformance/setup.sh
	fi
	if [[ -x .cache/conformance-venv/bin/python ]]; then
		t=$work/spark-$spark_live
		bin/dvbench gen -dir "$t" -live "$spark_live" -tombstones $((spark_live * 3 / 20)) -untracked $((spark_live / 20)) -partitions 100 -dv-fraction 0
		echo "## spark-$spark_live" >>"$out/suites.txt"
		bin/dvbench suite -python "$py" -reps 1 -out "$results" -table "$t" -label "spark-$spark_live" \
			-cases floor,dv-dry,dv-full,spark-dry,spark-full | tee -a "$out/suites.txt" || true
		rm -rf "$t" "$t".*
	else
		log "skipped: Delta Spark baseline (no .cache/conformance-venv; run conformance/setup.sh)"
	fi
fi

# 7. FULL vacuum on S3 (versitygw) and Azure (Azurite) with 20 ms added per request, at
#    concurrency 1, 4, 16, 64, with request counts against the floor. The servers are a
#    private set of the test servers (scripts/testservers) on ports of their own, state in
#    the work directory.
if ! skipped s3; then
	export DELTAVACUUM_TESTSERVERS_CACHE=$work/servers
	export DELTAVACUUM_TEST_S3_PORT=${S3_PORT:-7171} DELTAVACUUM_TEST_AZURE_PORT=${AZURE_PORT:-10100} DELTAVACUUM_TEST_GCS_PORT=${GCS_PORT:-4544}
	scripts/testservers/start.sh
	# (errexit applies inside traps: every step must succeed or be "|| true")
	trap 'scripts/testservers/stop.sh >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
	set -a
	. "$work/servers/testservers.env"
	set +a
	for backend in s3 azure; do
		for parts in 20 1000; do
			bin/dvbench "$backend" -live "$s3_live" -tombstones $((s3_live * 3 / 20)) -untracked $((s3_live / 20)) -partitions $parts \
				-latency 20ms -concurrency 1,4,16,64 -reps 2 -label "$backend-$s3_live-$parts-dirs" -out "$results" 2>&1 | tee -a "$out/suites.txt"
		done
	done
	scripts/testservers/stop.sh >/dev/null 2>&1 || true
fi

touch "$results"
"$py" bench/report.py "$results" --plot "${PLOT:-$out/time-vs-files.png}" >"$out/summary.md"
cat "$out/summary.md"
log "results in $out"
