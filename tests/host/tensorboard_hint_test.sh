#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# TensorBoard is not packaged in Debian, so nothing the user reads sends
# them to it as the way to look at a run: every paragraph of the README,
# Documentation/*.rst and the built man pages that says `tensorboard
# --logdir` also says it is for where TensorBoard is installed, and
# tools/demo prints its TensorBoard line only when `tensorboard` is on
# PATH, pointing at wsereport's pages otherwise.
. "$(dirname "$0")/tap.sh.inc"

# Paragraphs (blank-line separated) naming the command without "installed".
unqualified() {
	awk 'BEGIN { RS = "" } { p = $0; gsub(/\n/, " ", p); gsub(/\\-/, "-", p); gsub(/ +/, " ", p) }
	     p ~ /tensorboard --logdir/ && p !~ /installed/ { print FILENAME ": " substr(p, 1, 160) }' "$@"
}
t_same "README.md and Documentation/*.rst: tensorboard --logdir only where installed" "" \
	"$(unqualified README.md Documentation/*.rst)"
pages=()
for m in build/man/*.[0-9]; do
	[ -f "$m" ] || continue
	MANWIDTH=1000 man -l "$m" 2>/dev/null >"$t_tmp/${m##*/}.txt"
	pages+=("$t_tmp/${m##*/}.txt")
done
if [ ${#pages[@]} -eq 0 ]; then
	t_not_ok "the man pages: tensorboard --logdir only where installed" "no build/man/*: run make"
else
	t_same "the man pages: tensorboard --logdir only where installed" "" "$(unqualified "${pages[@]}")"
fi

# tools/demo's closing lines, run as the demo runs them: with a
# tensorboard on PATH and without one.
tail=$(sed -n '/^# Debian packages no TensorBoard/,/^fi$/p' tools/demo)
if [ -z "$tail" ]; then
	t_not_ok "tools/demo guards its TensorBoard line" "no guarded block after the runs' pages in tools/demo"
else
	mkdir -p "$t_tmp/with" "$t_tmp/without"
	printf '#!/bin/sh\nexit 0\n' >"$t_tmp/with/tensorboard"
	chmod +x "$t_tmp/with/tensorboard"
	with=$(PATH="$t_tmp/with:/usr/bin:/bin" runs=runs bash -c "$tail")
	without=$(PATH="$t_tmp/without:/usr/bin:/bin" runs=runs bash -c "$tail")
	if command -v tensorboard >/dev/null 2>&1 && [ "$(command -v tensorboard)" != "$t_tmp/with/tensorboard" ]; then
		t_skip "tools/demo says nothing of TensorBoard where it is not installed" \
			"a tensorboard is installed on this machine"
	else
		t_same "tools/demo says nothing of TensorBoard where it is not installed" "" "$without"
	fi
	t_same "tools/demo names TensorBoard where it is installed" \
		"  TensorBoard (installed here):  tensorboard --logdir runs" "$with"
fi
t_done
