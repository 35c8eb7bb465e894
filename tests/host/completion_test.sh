#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# bash completion of every tool make install installs
# (packaging/bash-completion/wse), driven as bash drives it (COMP_WORDS,
# COMP_CWORD), against the programs in build/bin: every tool has a
# completion; options come from each tool's own --help; every option with
# a list of values completes that list, and each of its words is one the
# tool's --help names, so a list cannot go stale unnoticed.
. "$(dirname "$0")/tap.sh.inc"
PATH=$t_top/build/bin:$PATH
. packaging/bash-completion/wse

# complete_line WORD...: COMPREPLY for the last word, sorted, one line,
# from the function complete -p names for the first word.
complete_line() {
	local func
	func=$(complete -p "$1" 2>/dev/null | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
	[ -n "$func" ] || { echo "(no completion for $1)"; return; }
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	"$func"
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

# --- every installed tool ---------------------------------------------------------
tools=$(t_make -s print-install-progs)
missing=()
for t in $tools; do
	complete -p "$t" >/dev/null 2>&1 || missing+=("$t")
done
t_same "a completion for every installed tool ($tools)" "" "${missing[*]}"

# --- every enumerated value ----------------------------------------------------------
# TOOL OPTION WORDS: OPTION's value completes to WORDS, each in TOOL --help.
while read -r tool option words; do
	[ -n "$tool" ] || continue
	if [ "$option" = --mode ] && [ "$tool" = wsetrain ] &&
	   ! wsetrain --help | grep -q -- --execution-mode; then
		words="auto pipelined weight_streaming"
	fi
	t_same "$tool $option: its values" "$words" "$(complete_line "$tool" "$option" '')"
	help=$("$tool" --help 2>&1)
	stale=()
	for w in $words; do
		grep -Eq -- "(^|[^A-Za-z0-9_-])$w([^A-Za-z0-9_-]|$)" <<<"$help" || stale+=("$w")
	done
	t_same "$tool $option: each value is in its --help" "" "${stale[*]}"
done <<'TABLE'
wsetrain --execution-mode auto pipelined weight_streaming
wsetrain --mode eval train train_and_eval
wsetrain --input appliance stream
wsetrain --progress auto bar lines
wsecc --wafer wse1 wse2 wse3
wsecc --mode auto pipelined weight_streaming
wsecc --execution-mode auto pipelined weight_streaming
wsecc --optimizer adam adamw momentum nesterov sgd
wsecc --input f32 u8
wsefwd --wafer wse2 wse3
wsefwd --log-level debug error info warn
wsefwd --fault-malformed-kind bad-data-crc bad-flags bad-hdr-crc bad-magic bad-reserved bad-version huge-length random short-status truncated unknown-opcode unknown-tag
wse-appliance --log-level debug error info warn
wse-appliance --role coordinator input memoryx swarmx
wsebench --only bandwidth rate
TABLE
t_same "wsefwd: every malformed kind its --help lists" \
	"$(wsefwd --help | sed -n '/--fault-malformed-kind/,/--fault-seed/p' |
	   grep -E '^ +[a-z-]+(, [a-z-]+)+,?$' | tr -s ', ' '\n\n' | grep . | sort | tr '\n' ' ' | sed 's/ $//')" \
	"$(complete_line wsefwd --fault-malformed-kind '')"

# --- options from each tool's --help -------------------------------------------------
t_same "wsetrain: options from its --help" "--epochs" "$(complete_line wsetrain --ep)"
t_same "wsetrain: -V and --version" "--version" "$(complete_line wsetrain --vers)"
t_same "wsecc: options from its --help" "--optimizer --output" "$(complete_line wsecc m --o)"
t_same "wsefwd: options from its --help" "--fault-malformed-after --fault-malformed-kind" \
	"$(complete_line wsefwd --fault-m)"
t_same "wse-appliance: options from its --help" "--memoryx-capacity --memoryx-ram --memoryx-store" \
	"$(complete_line wse-appliance --mem)"
t_same "wsebench: long and short options" "--depths --device" "$(complete_line wsebench --de)"
t_same "wsereport: options from its --help" "--gnuplot" "$(complete_line wsereport --g)"
for t in $tools; do
	t_same "$t: --help and --version" "--help --version" \
		"$(complete_line "$t" -- | tr ' ' '\n' | grep -E '^--(help|version)$' | tr '\n' ' ' | sed 's/ $//')"
done

# --- files, directories, addresses, nothing for numbers ----------------------------------
t_same "wsetrain: the model's path" "models/fc-mnist" "$(complete_line wsetrain models/fc-mn)"
t_same "wsetrain: a directory for --data" "tests/host" \
	"$(complete_line wsetrain models/fc-mnist --data tests/ho)"
t_same "wsetrain: a file for --resume" "tests/host/completion_test.sh" \
	"$(complete_line wsetrain models/fc-mnist --resume tests/host/completion_t)"
t_same "wsetrain: a file for --export" "tests/host/completion_test.sh" \
	"$(complete_line wsetrain m --export tests/host/completion_t)"
t_same "wsetrain: nothing for a number" "" "$(complete_line wsetrain m --epochs '')"
t_same "wsecc: the model's path" "models/fc-mnist" "$(complete_line wsecc models/fc-mn)"
t_same "wsecc: a file for -o" "tests/host/completion_test.sh" \
	"$(complete_line wsecc m -o tests/host/completion_t)"
t_same "wsecc: nothing for --batch" "" "$(complete_line wsecc m --batch '')"
t_same "wsefwd: --listen addresses" "tcp: unix:" "$(complete_line wsefwd --listen '')"
t_same "wsefwd: a unix socket's path" "unix:tests/host/completion_test.sh" \
	"$(complete_line wsefwd --listen unix:tests/host/completion_t)"
t_same "wsefwd: a directory for --store" "tests/host" "$(complete_line wsefwd --store tests/ho)"
t_same "wsefwd: nothing for --queues" "" "$(complete_line wsefwd --queues '')"
t_same "wse-appliance: a directory for --data-root" "tests/host" \
	"$(complete_line wse-appliance --data-root tests/ho)"
t_same "wse-appliance: a file for --config" "tests/host/completion_test.sh" \
	"$(complete_line wse-appliance --config tests/host/completion_t)"
t_same "wsebench: -f takes an address" "tcp: unix:" "$(complete_line wsebench -f '')"
t_same "wsebench: nothing for -r" "" "$(complete_line wsebench -r '')"
t_same "wsereport: run directories" "tests/host" "$(complete_line wsereport tests/ho)"
t_same "wsereport: a directory for -o" "tests/host" "$(complete_line wsereport -o tests/ho)"
t_same "wsereport: --gnuplot a command (gnuplot-nox, which tools/install-deps installs)" "gnuplot-nox" \
	"$(complete_line wsereport --gnuplot gnuplot-n)"

# --- wsectl: commands, their options, devices, addresses ----------------------------------
t_same "wsectl: the commands" "attach detach info list monitor reset stats" \
	"$(complete_line wsectl '')"
t_same "wsectl: a command's start" "list" "$(complete_line wsectl li)"
t_same "wsectl: commands after a global option" "reset" "$(complete_line wsectl -j re)"
t_same "wsectl: global options after the command" "--help --json --version" \
	"$(complete_line wsectl list --)"
t_same "wsectl: stats' own options beside the global ones" \
	"--count --help --json --version --watch" "$(complete_line wsectl stats 0 --)"
t_same "wsectl: no completion for an option's value" "" "$(complete_line wsectl stats 0 -w '')"
t_same "wsectl: attach addresses" "unix:" "$(complete_line wsectl attach u)"
t_same "wsectl: a unix socket's path" "unix:tests/host/completion_test.sh" \
	"$(complete_line wsectl attach unix:tests/host/completion_t)"
t_same "wsectl: monitor's options" "--timeout-ms" "$(complete_line wsectl monitor --t)"
t_done
