# A real LAVA server + dispatcher on this host for tests (Debian 12's LAVA 2023.01), started by hand: no systemd,
# no apache. Sourced by tests/lava/lava-test.sh; usable by hand:
#   source scripts/lib/packages.sh scripts/lib/lava.sh
#   lava_install; lava_start DIR; lava_setup DIR; lava_start_worker DIR
# lava_start and lava_start_worker write DIR/pids (one pid a line, stopped by lava_stop DIR); lava_setup DIR/token
# (the admin's API token), DIR/callback-secret (the value LAVA sends with notify callbacks) and DIR/worker-token.
# Everything binds 127.0.0.1. Needs root (LAVA's packages, PostgreSQL, the lavaserver user).

LAVA_URL=${LAVA_URL:-http://127.0.0.1:8000}
LAVA_DEVICES=(qemu01 qemu02)
# The worker's name is fixed, not the host's name: a LAVA database kept from an earlier machine (a CI cache) has its
# devices on that machine's worker, and a job for a device whose worker never connects stays Submitted.
LAVA_WORKER=bisectd-test

# lava_install: installs the LAVA packages when missing (about 5 minutes the first time).
lava_install() {
  install_packages "${LAVA_PACKAGES[@]}" || return 1
  # The package's postinst skips the database while PostgreSQL is down; finish it once PostgreSQL runs.
  lava_postgres_up || return 1
  if [ ! -e /etc/lava-server/settings.d/00-database.yaml ] ||
    ! su postgres -c "psql -tAc \"SELECT 1 FROM pg_database WHERE datname='lavaserver'\"" | grep -q 1; then
    /usr/bin/python3 /usr/share/lava-server/postinst.py --config --db >/dev/null || return 1
  fi
  mkdir -p /etc/lava-server/settings.d
  # Plain HTTP on loopback (no TLS): cookies must not require https. A fast scheduler poll for tests.
  cat >/etc/lava-server/settings.d/90-bisectd-test.yaml <<'EOF'
CSRF_COOKIE_SECURE: false
SESSION_COOKIE_SECURE: false
ALLOWED_HOSTS: ["127.0.0.1", "localhost"]
EOF
}

# The newest PostgreSQL cluster installed (empty when none is).
lava_postgres_version() { ls /etc/postgresql 2>/dev/null | sort -n | tail -1; }

lava_postgres_running() {
  local version
  version=$(lava_postgres_version)
  [ -n "$version" ] && pg_ctlcluster "$version" main status >/dev/null 2>&1
}

lava_postgres_up() { lava_postgres_running || pg_ctlcluster "$(lava_postgres_version)" main start; }

# lava_postgres_down: stops the cluster (for a caller that found it stopped and started it).
lava_postgres_down() { ! lava_postgres_running || pg_ctlcluster "$(lava_postgres_version)" main stop; }

# lava_wait_http URL SECONDS: waits until URL answers.
lava_wait_http() {
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.5
  done
  echo "lava: $1 did not answer within $2 s" >&2
  return 1
}

# lava_start DIR: gunicorn and the scheduler, logs in DIR.
lava_start() {
  local dir=$1
  mkdir -p "$dir"
  : >"$dir/pids"
  # The scheduler drops privileges to lavaserver and then reopens its log: the directory must be traversable.
  chmod 711 "$dir"
  touch "$dir/scheduler.log"
  chown lavaserver: "$dir/scheduler.log"
  lava_postgres_up || return 1
  # A LAVA left running (by a killed test) would answer in place of this one, with another database state.
  if curl -fsS -o /dev/null "$LAVA_URL/api/v0.2/system/version/" 2>/dev/null; then
    echo "lava: something already answers at $LAVA_URL (a LAVA left running?)" >&2
    return 1
  fi
  (cd / && exec setsid gunicorn3 lava_server.wsgi -u lavaserver -g lavaserver --workers 2 --timeout 120 \
    --bind 127.0.0.1:8000) >>"$dir/gunicorn.log" 2>&1 &
  echo $! >>"$dir/pids"
  lava_wait_http "$LAVA_URL/api/v0.2/system/version/" 120 || return 1
  # LAVA's scheduler looks for work every 20 s (or on a publisher event; no publisher here): tuned to 2 s for
  # tests through its module constant. The worker asks for jobs every --ping-interval.
  (cd / && exec setsid /usr/bin/python3 -c '
import importlib, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lava_server.settings.prod")
import django
django.setup()
scheduler = importlib.import_module("lava_server.management.commands.lava-scheduler")
scheduler.INTERVAL = float(os.environ.get("LAVA_SCHEDULER_INTERVAL", "2"))
scheduler.PING_TIMEOUT = 60
scheduler.Command().run_from_argv(["lava-server", "lava-scheduler", "--log-file", sys.argv[1], "--level", "DEBUG"])
' "$dir/scheduler.log") >>"$dir/scheduler.out" 2>&1 &
  echo $! >>"$dir/pids"
}

# lava_start_worker DIR: the dispatcher's worker, with the token lava_setup wrote (DIR/worker-token; the package's
# own token file belongs to the database of the package's first install, and a worker with a stale one is refused).
lava_start_worker() {
  local dir=$1
  (cd / && exec setsid lava-worker --url "$LAVA_URL/" --name "$LAVA_WORKER" --token-file "$dir/worker-token" \
    --log-file "$dir/worker.log" --level DEBUG --ping-interval 1 --job-log-interval 1) >>"$dir/worker.out" 2>&1 &
  echo $! >>"$dir/pids"
  # A worker the server refuses leaves every job Submitted: fail here, with its log, rather than at a job's timeout.
  local i details
  for ((i = 0; i < 30; i++)); do # each check starts Django: ~2 s
    details=$(lava_manage workers details "$LAVA_WORKER" 2>/dev/null) || true
    grep -q '^state *: *Online' <<<"$details" && return 0 # read whole first: see lava_setup
    sleep 1
  done
  echo "lava: worker $LAVA_WORKER not online within 30 checks" >&2
  tail -5 "$dir/worker.log" >&2
  return 1
}

# lava_stop DIR: stops what lava_start started (each process group by its pid; one already gone is no error, so
# that a caller under `set -e` still stops the others).
lava_stop() {
  local pid
  [ -f "$1/pids" ] || return 0
  while read -r pid; do
    [ -n "$pid" ] && { kill -TERM -- "-$pid" 2>/dev/null || true; }
  done <"$1/pids"
  sleep 2
  while read -r pid; do
    [ -n "$pid" ] && { kill -KILL -- "-$pid" 2>/dev/null || true; }
  done <"$1/pids"
  rm -f "$1/pids"
}

# lava_manage ARGS...: lava-server manage as LAVA's own user set-up expects.
lava_manage() { (cd / && lava-server manage "$@"); }

# lava_setup DIR: the admin user and token (DIR/token), device type qemu, devices qemu01 and qemu02 (no KVM).
lava_setup() {
  local dir=$1 token device listed
  # Lists are read whole before grep: `grep -q` closing the pipe early fails the pipeline under pipefail.
  listed=$(lava_manage users list 2>/dev/null)
  grep -qw admin <<<"$listed" ||
    lava_manage users add --superuser --staff --passwd admin-test admin >/dev/null || return 1
  token=$(lava_manage tokens list --user admin 2>/dev/null | sed -n 's/^\* \([a-z0-9]\{20,\}\).*/\1/p' | head -1)
  [ -n "$token" ] || token=$(lava_manage tokens add --user admin --description bisectd-test) || return 1
  printf '%s\n' "$token" >"$dir/token"
  # The notify callback's token: LAVA sends its value (DIR/callback-secret) in the callback's Authorization header.
  listed=$(lava_manage tokens list --user admin 2>/dev/null)
  if ! grep -q "(bisectd-callback)" <<<"$listed"; then
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/callback-secret"
    lava_manage tokens add --user admin --description bisectd-callback --secret "$(cat "$dir/callback-secret")" \
      >/dev/null || return 1
  else
    lava_manage tokens list --user admin | sed -n 's/^\* \([a-z0-9]*\) (bisectd-callback)$/\1/p' >"$dir/callback-secret"
  fi
  listed=$(lava_manage workers list -a 2>/dev/null)
  grep -q "^\* $LAVA_WORKER " <<<"$listed" || lava_manage workers add "$LAVA_WORKER" >/dev/null || return 1
  lava_manage workers details "$LAVA_WORKER" | sed -n 's/^token *: *//p' >"$dir/worker-token"
  [ -s "$dir/worker-token" ] || { echo "lava: no token for worker $LAVA_WORKER" >&2; return 1; }
  listed=$(lava_manage device-types list 2>/dev/null)
  grep -qw qemu <<<"$listed" || lava_manage device-types add qemu || return 1
  mkdir -p /etc/lava-server/dispatcher-config/devices
  local devices
  devices=$(lava_manage devices list -a 2>/dev/null)
  for device in "${LAVA_DEVICES[@]}"; do
    cat >"/etc/lava-server/dispatcher-config/devices/$device.jinja2" <<EOF
{% extends 'qemu.jinja2' %}
{% set mac_addr = '52:54:00:12:34:$(printf '%02x' $((0x59 + ${device#qemu})))' %}
{% set memory = 512 %}
{% set no_kvm = True %}
EOF
    grep -q "^\* $device " <<<"$devices" ||
      lava_manage devices add --device-type qemu --worker "$LAVA_WORKER" "$device" || return 1
    lava_manage devices update --worker "$LAVA_WORKER" --health UNKNOWN "$device" >/dev/null || return 1
  done
}

# lava_api PATH [curl args...]: an authenticated REST v0.2 call.
lava_api() {
  local path=$1
  shift
  curl -fsS -H "Authorization: Token $(cat "$LAVA_DIR/token")" "$@" "$LAVA_URL/api/v0.2/$path"
}
