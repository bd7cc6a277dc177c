# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# A private InfluxDB 1.x (Debian's influxdb package) on loopback for the
# export tests and the export benchmark: its own configuration, data, meta
# and WAL directories under DIR, a free port, no usage reporting, HTTP
# authentication on with one admin user.
#
#   influx_start DIR        start (again, with the same data) and wait for it
#   influx_stop             stop it; the data stays in DIR
#   influx_q QUERY          run InfluxQL on database lwm2, JSON out
#
# Sets INFLUX_PORT, INFLUX_URL (the write endpoint), INFLUX_USER,
# INFLUX_PASSWORD, INFLUX_PID.

INFLUX_USER=lwm2admin
INFLUX_PASSWORD=lwm2-test-secret

influx_have() {
	command -v influxd >/dev/null && command -v influx >/dev/null && command -v curl >/dev/null
}

_influx_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

influx_start() {
	local dir=$1 i
	mkdir -p "$dir"
	if [ ! -f "$dir/influxdb.conf" ]; then
		INFLUX_PORT=$(_influx_free_port)
		cat >"$dir/influxdb.conf" <<EOF
reporting-enabled = false
bind-address = "127.0.0.1:$(_influx_free_port)"
[meta]
  dir = "$dir/meta"
[data]
  dir = "$dir/data"
  wal-dir = "$dir/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  bind-address = "127.0.0.1:$INFLUX_PORT"
  auth-enabled = true
  log-enabled = false
[continuous_queries]
  enabled = false
EOF
	fi
	INFLUX_PORT=$(sed -n 's/^  bind-address = "127.0.0.1:\([0-9]*\)"$/\1/p' "$dir/influxdb.conf")
	# shellcheck disable=SC2034 # for the scripts that source this file
	INFLUX_URL=http://127.0.0.1:$INFLUX_PORT/write
	influxd run -config "$dir/influxdb.conf" >>"$dir/influxd.log" 2>&1 &
	INFLUX_PID=$!
	for ((i = 0; i < 150; i++)); do
		if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$INFLUX_PORT/ping")" = 204 ]; then
			break
		fi
		if ! kill -0 "$INFLUX_PID" 2>/dev/null; then
			return 1
		fi
		sleep 0.2
	done
	# the first user may be made without credentials, the rest with them
	influx -host 127.0.0.1 -port "$INFLUX_PORT" \
		-execute "CREATE USER $INFLUX_USER WITH PASSWORD '$INFLUX_PASSWORD' WITH ALL PRIVILEGES" \
		>/dev/null 2>&1 || true
	influx -host 127.0.0.1 -port "$INFLUX_PORT" -username "$INFLUX_USER" \
		-password "$INFLUX_PASSWORD" -execute 'CREATE DATABASE lwm2' >/dev/null
}

influx_stop() {
	[ -n "${INFLUX_PID:-}" ] || return 0
	kill "$INFLUX_PID" 2>/dev/null
	wait "$INFLUX_PID" 2>/dev/null
	INFLUX_PID=
}

influx_q() {
	influx -host 127.0.0.1 -port "$INFLUX_PORT" -username "$INFLUX_USER" \
		-password "$INFLUX_PASSWORD" -database lwm2 -format json -execute "$1"
}
