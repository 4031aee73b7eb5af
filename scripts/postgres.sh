#!/usr/bin/env bash
# A private PostgreSQL cluster for the sync tests and the demo:
#
#   scripts/postgres.sh start DIR   installs Debian's postgresql when missing, creates a cluster
#                                   in DIR (initdb), starts it on a free loopback port and writes
#                                   its URL to DIR/url (postgres://shoal@127.0.0.1:PORT/shoal)
#   scripts/postgres.sh stop DIR    stops it and removes DIR
#   scripts/postgres.sh halt DIR    stops it at once (as a crash would), keeping its data
#   scripts/postgres.sh resume DIR  starts a halted cluster again on the same port
#
# PostgreSQL refuses to run as root: as root, the cluster belongs to the user `shoalpg`, created
# when missing; otherwise to the user running the script. Nothing listens beyond 127.0.0.1, and
# the socket directory is DIR itself.
set -euo pipefail

command="${1:-}"
dir="${2:-}"
if [ -z "$command" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop|halt|resume DIR" >&2
  exit 2
fi
sudo_cmd=""
[ "$(id -u)" = 0 ] || sudo_cmd="sudo"

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u shoalpg -- "$@"; else "$@"; fi
}

case "$command" in
start)
  if [ -z "$(pg_bin)" ]; then
    echo "postgres.sh: installing postgresql (Debian's package)"
    $sudo_cmd apt-get update -qq
    # The package's own cluster is not needed: only the binaries are used.
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq postgresql >/dev/null
  fi
  bin="$(pg_bin)"
  if [ -z "$bin" ]; then
    echo "postgres.sh: no PostgreSQL binaries under /usr/lib/postgresql after installing" >&2
    exit 1
  fi
  if [ "$(id -u)" = 0 ] && ! id shoalpg >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin shoalpg
  fi
  if [ -f "$dir/url" ] && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    echo "postgres.sh: already running: $(cat "$dir/url")"
    exit 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  [ "$(id -u)" = 0 ] && chown shoalpg "$dir"
  # The first free port from 55432 (bash's /dev/tcp: a refused connection means nobody listens).
  port=55432
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    port=$((port + 1))
    if [ "$port" -gt 55632 ]; then
      echo "postgres.sh: no free port in 55432-55632" >&2
      exit 1
    fi
  done
  as_owner "$bin/initdb" -D "$dir/data" -U shoal -A trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    exit 1
  }
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null || {
    cat "$dir/server.log" >&2
    exit 1
  }
  as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U shoal shoal
  echo "$port" >"$dir/port"
  echo "postgres://shoal@127.0.0.1:$port/shoal" >"$dir/url"
  echo "postgres.sh: running: $(cat "$dir/url")"
  ;;
stop)
  bin="$(pg_bin)"
  if [ -n "$bin" ] && [ -d "$dir/data" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
halt)
  as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
  ;;
resume)
  port="$(cat "$dir/port")"
  as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
  ;;
*)
  echo "usage: $0 start|stop|halt|resume DIR" >&2
  exit 2
  ;;
esac
