# SPDX-License-Identifier: GPL-2.0-only
# TAP for shell tests (sourced; build/host-tests/tap.sh.inc beside them):
# each check prints "ok N NAME" or "not ok N NAME" with why, and t_done
# ends with the kselftest "# Totals:" line tests/run-tests counts.
t_pass=0 t_fail=0 t_skip=0 t_n=0

# The tree (scripts run as build/host-tests/NAME, two levels below it), as
# the working directory; a temporary directory removed at exit.
t_top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$t_top" || exit 1
t_tmp=$(mktemp -d "/tmp/wse-${0##*/}.XXXXXX")
trap 'rm -rf "$t_tmp"' EXIT
# t_config VAR: VAR's value in config.mk (KVER, WSE_VERSION, ...).
t_config() { sed -n "s/^$1 := //p" config.mk; }
# t_make ARGS...: a make of its own, not a part of the caller's (make
# check's) job server.
t_make() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "$@"; }

t_ok() { # NAME
	t_n=$((t_n + 1)) t_pass=$((t_pass + 1))
	echo "ok $t_n $1"
}
t_not_ok() { # NAME WHY...
	local name=$1
	shift
	t_n=$((t_n + 1)) t_fail=$((t_fail + 1))
	echo "not ok $t_n $name"
	printf '#   %s\n' "$@"
}
t_skip() { # NAME WHY
	t_n=$((t_n + 1)) t_skip=$((t_skip + 1))
	echo "ok $t_n $1 # SKIP $2"
}
# t_run NAME CMD...: ok when CMD succeeds; its output is shown when not.
t_run() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		t_ok "$name"
	else
		t_not_ok "$name" "failed: $*" "$(printf '%s\n' "$out" | tail -n 20)"
	fi
}
# t_same NAME WANT GOT: ok when the two strings are equal.
t_same() {
	if [ "$2" = "$3" ]; then
		t_ok "$1"
	else
		t_not_ok "$1" "want: $2" "got:  $3"
	fi
}
t_done() {
	echo "# Totals: pass:$t_pass fail:$t_fail xfail:0 xpass:0 skip:$t_skip error:0"
	[ "$t_fail" = 0 ]
	exit
}
