#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Documentation that cannot drift: every function, file and option
# Documentation/*.rst names (and so every man page made from it) exists in
# the tree or in the tool's --help (tools/check-docs says how names are
# found), and a drift put into a copy of a page is caught.
. "$(dirname "$0")/tap.sh.inc"
check=(/usr/bin/python3 tools/check-docs --bin build/bin)

t_run "every function, file and option the pages name exists" "${check[@]}"

# A copy of wsecc.rst with one of each kind of drift.
page=$t_tmp/wsecc.rst
cp Documentation/wsecc.rst "$page"
cat >>"$page" <<'DRIFT'

``--no-such-option N``
  An option wsecc does not have.

Then ``wsetrain prog.wsep --no-such-flag``, see ``wse_no_such_function()``,
lib/wse/no_such_file.c and fwd_no_such_file.c.
DRIFT
out=$("${check[@]}" "$page" 2>&1)
t_same "a drift is an error" 1 "$?"
n=$(wc -l <Documentation/wsecc.rst)
want="$page:$((n + 2)): option --no-such-option is not in wsecc --help
$page:$((n + 5)): option --no-such-flag is not in wsetrain --help
$page:$((n + 5)): function wse_no_such_function() is not defined in the tree
$page:$((n + 6)): file lib/wse/no_such_file.c is not in the tree
$page:$((n + 6)): file fwd_no_such_file.c is not in the tree"
t_same "each drift is named with its line" "$(LC_ALL=C sort <<<"$want")" \
	"$(grep -v '^check-docs:' <<<"$out" | LC_ALL=C sort)"
t_done
