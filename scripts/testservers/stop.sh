#!/usr/bin/env bash
# Stops the test servers that scripts/testservers/start.sh started (by the process ids it
# recorded, nothing else) and removes their data directory and env file.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${DELTAVACUUM_TESTSERVERS_CACHE:-$repo/.cache}
state=$cache/testservers
envfile=${DELTAVACUUM_TESTSERVERS_ENV:-$cache/testservers.env}

pids=()
for name in versitygw versitygw-versioned azurite fake-gcs-server; do
	pidfile=$state/$name.pid
	[[ -e $pidfile ]] || continue
	pid=$(cat "$pidfile")
	rm -f "$pidfile"
	if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
		# Each server was started in a process group of its own.
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
		pids+=("$pid")
	fi
done
for _ in $(seq 1 100); do
	alive=0
	for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
	[[ $alive == 0 ]] && break
	sleep 0.1
done
for pid in "${pids[@]}"; do
	kill -0 "$pid" 2>/dev/null && { kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null; }
done
if [[ -e $state/data-dir ]]; then
	data=$(cat "$state/data-dir")
	case $data in
	*/deltavacuum-testservers.*) rm -rf -- "$data" ;;
	esac
	rm -f "$state/data-dir"
fi
rm -f "$envfile"
