#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The systemd units make install puts in SYSTEMDUNITDIR (wsefwd@.service,
# wse-appliance.service), installed with every directory in a temporary
# tree so that their ExecStart names binaries that exist: systemd-analyze
# verify accepts them (unit syntax, the command, the man pages they name),
# each keeps its hardening (DynamicUser, ProtectSystem=strict, PrivateTmp,
# NoNewPrivileges, and systemd-analyze security's exposure at most 2.0 of
# 10), and the command line each would run, with the settings an
# EnvironmentFile may give, starts the daemon, which then stops cleanly on
# SIGTERM, as systemctl stop sends: exit status 0, or killed by SIGTERM
# itself, which systemd also counts as clean (wsefwd writes its port file
# a moment before it takes SIGTERM as a request to shut down).
. "$(dirname "$0")/tap.sh.inc"
tmp=$t_tmp
if ! command -v systemd-analyze >/dev/null; then
	t_skip "the systemd units" "no systemd-analyze here: run tools/install-deps (Debian's systemd)"
	t_done
fi
prefix=$tmp/usr units=$tmp/units
if ! out=$(t_make install PREFIX="$prefix" SYSTEMDUNITDIR="$units" SYSCONFDIR="$tmp/etc" \
		UDEVDIR="$tmp/udev" SYSUSERSDIR="$tmp/sysusers" DKMSSRCDIR="$tmp/src" 2>&1); then
	t_not_ok "make install PREFIX=TMP SYSTEMDUNITDIR=TMP/units" "$(tail -n 20 <<<"$out")"
	t_done
fi
t_same "the units installed" "wse-appliance.service wsefwd@.service" "$(cd "$units" && echo *)"

# A template is verified as one of its instances.
ln -s wsefwd@.service "$units/wsefwd@7001.service"
for unit in wsefwd@7001.service wse-appliance.service; do
	if out=$(MANPATH=$prefix/share/man systemd-analyze verify "$units/$unit" 2>&1) && [ -z "$out" ]; then
		t_ok "systemd-analyze verify $unit"
	else
		t_not_ok "systemd-analyze verify $unit" "$out"
	fi
	missing=()
	for setting in DynamicUser=yes ProtectSystem=strict PrivateTmp=yes NoNewPrivileges=yes; do
		grep -qx "$setting" "$units/$unit" || missing+=("$setting")
	done
	t_same "$unit is hardened" "" "${missing[*]}"
	if out=$(systemd-analyze security --offline=yes --threshold=20 "$units/$unit" 2>&1); then
		t_ok "$unit: exposure at most 2.0 ($(sed -n 's/.*exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$out"))"
	else
		t_not_ok "$unit: exposure at most 2.0" "$(grep -e '✗' -e 'Overall' <<<"$out")"
	fi
done

# unit_command UNIT INSTANCE [NAME=VALUE...]: the words of UNIT's ExecStart
# for INSTANCE (%i), one a line, with its Environment= and then the
# NAME=VALUEs (as from its EnvironmentFile) substituted as systemd does:
# ${NAME} as one word, $NAME split at white space.
unit_command() {
	local file=$units/$1 instance=$2 line word name
	shift 2
	local -A env=()
	local -a assigns
	while IFS= read -r line; do
		eval "assigns=(${line//%i/$instance})"
		for word in "${assigns[@]}"; do env[${word%%=*}]=${word#*=}; done
	done < <(sed -n 's/^Environment=//p' "$file")
	for word in "$@"; do env[${word%%=*}]=${word#*=}; done
	read -ra line <<<"$(sed -n 's/^ExecStart=//p' "$file" | sed "s/%i/$instance/g")"
	# shellcheck disable=SC2016,SC2086 # the literal ${ and $, and the split
	for word in "${line[@]}"; do
		case "$word" in
		'${'*'}') name=${word#'${'} && printf '%s\n' "${env[${name%'}'}]}" ;;
		'$'*) [ -n "${env[${word#$}]}" ] && printf '%s\n' ${env[${word#$}]} ;;
		*) printf '%s\n' "$word" ;;
		esac
	done
}

# runs_and_stops NAME PORTFILE CMD...: CMD listens (writes PORTFILE) and
# stops cleanly, as systemd sees it, on SIGTERM.
runs_and_stops() {
	local name=$1 portfile=$2 pid status
	shift 2
	"$@" >"$tmp/daemon.log" 2>&1 &
	pid=$!
	for _ in $(seq 200); do [ -s "$portfile" ] && break; sleep 0.05; done
	if [ ! -s "$portfile" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		t_not_ok "$name" "no port in 10 s: $*" "$(tail -n 5 "$tmp/daemon.log")"
		return
	fi
	kill -TERM "$pid"
	wait "$pid"
	status=$?
	if [ "$status" = 0 ] || [ "$status" = $((128 + 15)) ]; then
		t_ok "$name"
	else
		t_not_ok "$name" "exit status $status after SIGTERM (neither 0 nor SIGTERM's 143): $*" "$(tail -n 5 "$tmp/daemon.log")"
	fi
}

# wsefwd@0: the default address, tcp:127.0.0.1:0, where the kernel picks a port.
mapfile -t cmd < <(unit_command wsefwd@.service 0 "WSEFWD_OPTIONS=--port-file $tmp/fwd.port --log-level warn")
t_same "wsefwd@0 listens on tcp:127.0.0.1:0" "--listen tcp:127.0.0.1:0" "${cmd[1]} ${cmd[2]}"
runs_and_stops "wsefwd@.service's command starts wsefwd and SIGTERM stops it" "$tmp/fwd.port" "${cmd[@]}"
mapfile -t cmd < <(unit_command wse-appliance.service '' WSE_APPLIANCE_LISTEN=tcp:127.0.0.1:0 \
	"WSE_APPLIANCE_OPTIONS=--systems 1 --port-file $tmp/appliance.port --log-level warn")
runs_and_stops "wse-appliance.service's command starts an appliance and SIGTERM stops it" \
	"$tmp/appliance.port" "${cmd[@]}"
t_same "wse-appliance.service's default address and systems" \
	"--listen tcp:127.0.0.1:7100 --systems 1" "$(unit_command wse-appliance.service '' | tail -n +2 | tr '\n' ' ' | sed 's/ $//')"
t_done
