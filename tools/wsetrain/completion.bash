# SPDX-License-Identifier: GPL-2.0-only
# bash completion for wsetrain (installed as
# $(datadir)/bash-completion/completions/wsetrain). The options are read
# from 'wsetrain --help', so new ones complete without a change here;
# files, directories, execution modes and device indexes for their values.

_wsetrain()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local prog=${COMP_WORDS[0]} help modes devices

	help=$("$prog" --help 2>/dev/null)
	modes="auto pipelined weight_streaming"
	case "$prev" in
	--data | --tensorboard | --model_dir | --model-dir)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return
		;;
	--checkpoint | --resume | --inspect | --export | --init-from | --csv | -o | --output | --wsecc)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return
		;;
	--execution-mode)
		mapfile -t COMPREPLY < <(compgen -W "$modes" -- "$cur")
		return
		;;
	--input)
		mapfile -t COMPREPLY < <(compgen -W "stream appliance" -- "$cur")
		return
		;;
	--mode)
		# Where --execution-mode exists, --mode is what to do (ModelZoo's).
		if [[ $help == *--execution-mode* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "train eval train_and_eval" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$modes" -- "$cur")
		fi
		return
		;;
	--devices)
		devices=$(wsectl list 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ { print $1 }')
		mapfile -t COMPREPLY < <(compgen -W "$devices" -- "${cur##*,}" |
					 sed "s/^/${cur%"${cur##*,}"}/")
		return
		;;
	esac
	# An option taking a value that is none of the above: nothing to offer.
	if [[ $prev == -* ]] && grep -Eq -- "^ *(-[a-z], )?$prev [A-Z]" <<<"$help"; then
		COMPREPLY=()
		return
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(grep -Eo -- '(^|[ ,])--?[A-Za-z][A-Za-z_-]*' <<<"$help" |
						      tr -d ' ,' | sort -u)" -- "$cur")
		return
	fi
	# The model: a model description, a directory of them, or a .wsep.
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -o filenames -F _wsetrain wsetrain
