#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# bash completion of wsectl and wsetrain (tools/*/completion.bash), driven
# as bash drives it (COMP_WORDS, COMP_CWORD), against the programs in
# build/bin: wsetrain's options come from its own --help.
. "$(dirname "$0")/tap.sh.inc"
PATH=$t_top/build/bin:$PATH
. tools/wsectl/completion.bash
. tools/wsetrain/completion.bash

# complete_line FUNC WORD...: COMPREPLY for the last word, sorted, one line.
complete_line() {
	local func=$1
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	"$func"
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

t_same "wsectl: the commands" "attach detach info list monitor reset stats" \
	"$(complete_line _wsectl wsectl '')"
t_same "wsectl: a command's start" "list" "$(complete_line _wsectl wsectl li)"
t_same "wsectl: commands after a global option" "reset" "$(complete_line _wsectl wsectl -j re)"
t_same "wsectl: global options after the command" "--help --json --version" \
	"$(complete_line _wsectl wsectl list --)"
t_same "wsectl: stats' own options beside the global ones" \
	"--count --help --json --version --watch" "$(complete_line _wsectl wsectl stats 0 --)"
t_same "wsectl: no completion for an option's value" "" \
	"$(complete_line _wsectl wsectl stats 0 -w '')"
t_same "wsectl: attach addresses" "unix:" "$(complete_line _wsectl wsectl attach u)"
t_same "wsectl: a unix socket's path" "unix:tests/host/completion_test.sh" \
	"$(complete_line _wsectl wsectl attach unix:tests/host/completion_t)"
t_same "wsectl: monitor's options" "--timeout-ms" "$(complete_line _wsectl wsectl monitor --t)"

t_same "wsetrain: options from its --help" "--epochs" "$(complete_line _wsetrain wsetrain --ep)"
t_same "wsetrain: -V and --version" "--version" "$(complete_line _wsetrain wsetrain --vers)"
t_same "wsetrain: the model's path" "models/fc-mnist" \
	"$(complete_line _wsetrain wsetrain models/fc-mn)"
t_same "wsetrain: a directory for --data" "tests/host" \
	"$(complete_line _wsetrain wsetrain models/fc-mnist --data tests/ho)"
t_same "wsetrain: a file for --resume" "tests/host/completion_test.sh" \
	"$(complete_line _wsetrain wsetrain models/fc-mnist --resume tests/host/completion_t)"
if build/bin/wsetrain --help | grep -q -- --execution-mode; then
	t_same "wsetrain: execution modes" "pipelined" \
		"$(complete_line _wsetrain wsetrain m --execution-mode pi)"
	t_same "wsetrain: --mode is what to do" "train train_and_eval" \
		"$(complete_line _wsetrain wsetrain m --mode tr)"
else
	t_same "wsetrain: execution modes for --mode" "pipelined" \
		"$(complete_line _wsetrain wsetrain m --mode pi)"
fi
t_same "wsetrain: nothing for a number" "" "$(complete_line _wsetrain wsetrain m --epochs '')"
t_done
