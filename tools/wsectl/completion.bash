# SPDX-License-Identifier: GPL-2.0-only
# bash completion for wsectl (installed as
# $(datadir)/bash-completion/completions/wsectl). Commands, their options
# and the global ones anywhere on the line, device indexes from
# 'wsectl list', and attach addresses (tcp:, unix: and a socket path).

# The device indexes 'wsectl list' shows (nothing without the module).
_wsectl_devices()
{
	"${1:-wsectl}" list 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ { print $1 }'
}

_wsectl()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="list info stats attach detach reset monitor"
	local globals="-j --json -h --help -V --version"
	local cmd='' nargs=0 i w opts

	# The command is the first word that is not an option (or an option's value).
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case "$w" in
		-w | --watch | -c | --count | --timeout-ms | --keepalive-ms) i=$((i + 1)) ;;
		-*) ;;
		*) if [ -z "$cmd" ]; then cmd=$w; else nargs=$((nargs + 1)); fi ;;
		esac
	done

	case "$prev" in
	-w | --watch | -c | --count | --timeout-ms | --keepalive-ms)
		COMPREPLY=()
		return
		;;
	esac

	case "$cmd" in
	'') opts=$globals ;;
	stats) opts="$globals -w --watch -c --count" ;;
	attach) opts="$globals --keepalive-ms" ;;
	monitor) opts="$globals -c --count --timeout-ms" ;;
	*) opts=$globals ;;
	esac
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		return
	fi

	case "$cmd" in
	'')
		mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
		;;
	info | stats | detach | reset)
		[ "$nargs" = 0 ] &&
			mapfile -t COMPREPLY < <(compgen -W "$(_wsectl_devices "${COMP_WORDS[0]}")" -- "$cur")
		;;
	attach)
		[ "$nargs" = 0 ] || return
		if [[ $cur == unix:* ]]; then
			mapfile -t COMPREPLY < <(compgen -f -- "${cur#unix:}" | sed 's/^/unix:/')
		else
			mapfile -t COMPREPLY < <(compgen -W "tcp: unix:" -- "$cur")
			compopt -o nospace 2>/dev/null
		fi
		;;
	esac
}
complete -F _wsectl wsectl
