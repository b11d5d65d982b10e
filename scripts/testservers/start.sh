#!/usr/bin/env bash
# Installs (pinned versions, cached) and starts the object-store test servers on 127.0.0.1:
#   S3     versitygw (posix backend, data in a temp dir)   127.0.0.1:$DELTAVACUUM_TEST_S3_PORT (7070)
#   S3     a second versitygw whose buckets can be versioned (--versioning-dir), for undo
#                                                         127.0.0.1:$DELTAVACUUM_TEST_S3_VERSIONED_PORT (7071)
#   Azure  Azurite blob service (data in a temp dir)        127.0.0.1:$DELTAVACUUM_TEST_AZURE_PORT (10000)
#   GCS    fake-gcs-server (in-memory, http)                127.0.0.1:$DELTAVACUUM_TEST_GCS_PORT (4443)
# then waits until each answers and writes an env file (default .cache/testservers.env) that
# exports the DELTAVACUUM_TEST_* variables the integration tests read:
#   . .cache/testservers.env && go test ./storage/...
# Stop them with scripts/testservers/stop.sh. Servers already started by this script are
# stopped first. Nothing listens on any address but 127.0.0.1. With --install-only it installs
# and exits, starting and stopping nothing (scripts/test.sh runs that while go vet compiles).
#
# Environment: DELTAVACUUM_TESTSERVERS_TOOLS (default ~/.cache/deltavacuum-testservers, outside
# the work tree so that every clone on this machine, CI's included, reuses it) holds the
# binaries (bin/) and Azurite's npm install (azurite/); DELTAVACUUM_TESTSERVERS_CACHE (default
# <repo>/.cache) holds the servers' state (testservers/: pids, logs) and the env file;
# DELTAVACUUM_TESTSERVERS_ENV overrides the env file's path; the three *_PORT above.
set -euo pipefail

VERSITYGW_VERSION=v1.8.0
FAKE_GCS_SERVER_VERSION=v1.56.1
AZURITE_VERSION=3.35.0 # the newest that runs on Node 20

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${DELTAVACUUM_TESTSERVERS_CACHE:-$repo/.cache}
tools=${DELTAVACUUM_TESTSERVERS_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/deltavacuum-testservers}
bin=$tools/bin
state=$cache/testservers
envfile=${DELTAVACUUM_TESTSERVERS_ENV:-$cache/testservers.env}
s3_port=${DELTAVACUUM_TEST_S3_PORT:-7070}
s3v_port=${DELTAVACUUM_TEST_S3_VERSIONED_PORT:-7071}
azure_port=${DELTAVACUUM_TEST_AZURE_PORT:-10000}
gcs_port=${DELTAVACUUM_TEST_GCS_PORT:-4443}

# Fixed, well-known test credentials: loopback servers only.
s3_access=deltavacuum-test
s3_secret=deltavacuum-test-secret
azure_account=devstoreaccount1
azure_key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

install_only=false
[[ ${1:-} == --install-only ]] && install_only=true
mkdir -p "$bin" "$state"
log() { printf 'testservers: %s\n' "$*" >&2; }
now() { date +%s; }
$install_only || "$here/stop.sh" >/dev/null 2>&1 || true
t0=$(now)

# --- install (in parallel; each skipped when the pinned version is already there) ---------
install_go() { # name module version
	local name=$1 module=$2 version=$3 stamp="$bin/.$1-$3"
	if [[ -x $bin/$name && -e $stamp ]]; then return 0; fi
	local t=$(now)
	# Outside the repository, so that its go.mod plays no part.
	(cd "$tools" && GOBIN="$bin" go install -trimpath -ldflags="-s -w" "$module@$version") >"$state/install-$name.log" 2>&1 || {
		log "go install $module@$version failed:"; tail -n 30 "$state/install-$name.log" >&2; return 1
	}
	rm -f "$bin/.$name-"*
	touch "$stamp"
	log "installed $name $version in $(($(now) - t))s"
}
install_azurite() {
	local pkg="$tools/azurite/node_modules/azurite/package.json"
	if [[ -e $pkg ]] && grep -q "\"version\": \"$AZURITE_VERSION\"" "$pkg"; then return 0; fi
	local t=$(now)
	mkdir -p "$tools/azurite"
	npm install --prefix "$tools/azurite" --prefer-offline --no-audit --no-fund --no-save --loglevel=error \
		"azurite@$AZURITE_VERSION" >"$state/install-azurite.log" 2>&1 || {
		log "npm install azurite@$AZURITE_VERSION failed:"; tail -n 30 "$state/install-azurite.log" >&2; return 1
	}
	log "installed azurite $AZURITE_VERSION in $(($(now) - t))s"
}
install_go versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION" & p1=$!
install_go fake-gcs-server github.com/fsouza/fake-gcs-server "$FAKE_GCS_SERVER_VERSION" & p2=$!
install_azurite & p3=$!
fail=0
wait $p1 || fail=1
wait $p2 || fail=1
wait $p3 || fail=1
[[ $fail == 0 ]] || { log "install failed"; exit 1; }
t_installed=$(now)
if $install_only; then
	log "installed in $tools ($((t_installed - t0))s)"
	exit 0
fi

# --- start -------------------------------------------------------------------------------
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$s3_port" "$s3v_port" "$azure_port" "$gcs_port"; do
	if port_busy "$p"; then
		log "127.0.0.1:$p is already in use by another process; set DELTAVACUUM_TEST_*_PORT or free it"
		exit 1
	fi
done

data=$(mktemp -d "${TMPDIR:-/tmp}/deltavacuum-testservers.XXXXXX")
echo "$data" >"$state/data-dir"
mkdir -p "$data/s3" "$data/s3v/objects" "$data/s3v/versions" "$data/azurite"

start() { # name command... (run in the data directory, in a process group of its own)
	local name=$1 pid; shift
	set -m
	(cd "$data" && exec "$@" >"$state/$name.log" 2>&1 </dev/null) &
	pid=$!
	set +m
	echo "$pid" >"$state/$name.pid"
}
start versitygw env ROOT_ACCESS_KEY="$s3_access" ROOT_SECRET_KEY="$s3_secret" \
	"$bin/versitygw" --port "127.0.0.1:$s3_port" --quiet posix "$data/s3"
# A second instance for versioned buckets: kept apart so that versioning support plays no part
# in the behaviour every other test sees.
start versitygw-versioned env ROOT_ACCESS_KEY="$s3_access" ROOT_SECRET_KEY="$s3_secret" \
	"$bin/versitygw" --port "127.0.0.1:$s3v_port" --quiet posix --versioning-dir "$data/s3v/versions" "$data/s3v/objects"
# On disk rather than --inMemoryPersistence: in memory, Azurite slows down as the tests go
# (300 puts went from 2 s to 30 s over a few suite runs). No telemetry: it would try to
# reach the Internet.
start azurite node "$tools/azurite/node_modules/azurite/dist/src/blob/main.js" \
	--blobHost 127.0.0.1 --blobPort "$azure_port" --location "$data/azurite" \
	--skipApiVersionCheck --loose --silent --disableTelemetry
start fake-gcs-server "$bin/fake-gcs-server" -scheme http -host 127.0.0.1 -port "$gcs_port" \
	-public-host "127.0.0.1:$gcs_port" -external-url "http://127.0.0.1:$gcs_port" \
	-backend memory -log-level warn

wait_http() { # name url
	local name=$1 url=$2 i
	for i in $(seq 1 150); do
		if curl -s -o /dev/null --max-time 2 "$url"; then return 0; fi
		if ! kill -0 "$(cat "$state/$name.pid")" 2>/dev/null; then
			log "$name exited:"; tail -n 30 "$state/$name.log" >&2; return 1
		fi
		sleep 0.2
	done
	log "$name did not answer at $url within 30s:"; tail -n 30 "$state/$name.log" >&2
	return 1
}
wait_http versitygw "http://127.0.0.1:$s3_port/"
wait_http versitygw-versioned "http://127.0.0.1:$s3v_port/"
wait_http azurite "http://127.0.0.1:$azure_port/$azure_account?comp=list"
wait_http fake-gcs-server "http://127.0.0.1:$gcs_port/storage/v1/b"

mkdir -p "$(dirname "$envfile")"
umask 077
cat >"$envfile" <<EOF
# Written by scripts/testservers/start.sh: loopback test servers and their test credentials.
export DELTAVACUUM_TEST_S3_ENDPOINT=http://127.0.0.1:$s3_port
export DELTAVACUUM_TEST_S3_REGION=us-east-1
export DELTAVACUUM_TEST_S3_ACCESS_KEY_ID=$s3_access
export DELTAVACUUM_TEST_S3_SECRET_ACCESS_KEY=$s3_secret
export DELTAVACUUM_TEST_S3_BUCKET=deltavacuum-test
export DELTAVACUUM_TEST_S3_VERSIONED_ENDPOINT=http://127.0.0.1:$s3v_port
export DELTAVACUUM_TEST_AZURE_ENDPOINT=http://127.0.0.1:$azure_port/$azure_account
export DELTAVACUUM_TEST_AZURE_ACCOUNT=$azure_account
export DELTAVACUUM_TEST_AZURE_KEY='$azure_key'
export DELTAVACUUM_TEST_AZURE_CONTAINER=deltavacuum-test
export DELTAVACUUM_TEST_GCS_ENDPOINT=http://127.0.0.1:$gcs_port
export DELTAVACUUM_TEST_GCS_BUCKET=deltavacuum-test
EOF
log "servers up (install $((t_installed - t0))s, start $(($(now) - t_installed))s); env in $envfile"
