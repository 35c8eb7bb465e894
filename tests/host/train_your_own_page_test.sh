#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Documentation/train-your-own.rst as a page: docutils renders it without a
# warning (rst2html --halt=warning, Sphinx's :doc: role aside), the
# README's first screen links it, and train_your_own_test (which runs it
# in the guest) finds its steps: each file it saves and each command, the
# ones every stage of the path needs among them.
. "$(dirname "$0")/tap.sh.inc"
page=Documentation/train-your-own.rst

# docutils has no :doc: (a Sphinx role): read it as literal text, as the
# man pages' build turns it into a path.
sed 's/:doc:`\([^`]*\)`/``\1``/g' "$page" >"$t_tmp/page.rst"
if out=$(rst2html --halt=warning "$t_tmp/page.rst" "$t_tmp/page.html" 2>&1); then
	t_ok "rst2html --halt=warning renders $page"
else
	t_not_ok "rst2html --halt=warning renders $page" "$out"
fi

t_same "the README's first 30 lines link $page" 1 \
	"$(head -n 30 README.md | grep -c "($page)")"
t_same "Documentation/index.rst lists the page" 1 \
	"$(grep -c '^   train-your-own$' Documentation/index.rst)"

if ! steps=$(/usr/bin/python3 tests/guest/train_your_own_test.py --list "$page" 2>&1); then
	t_not_ok "train_your_own_test finds the page's steps" "$steps"
	t_done
fi
t_ok "train_your_own_test finds the page's steps"
# Each stage of the path, in this order.
want='^file mynet.py
^run python3 mynet.py$
^file mynet.yaml
^run wsecc .* --validate-only
^run wsecc .* --report
^run wsecc .* -o mynet.wsep$
^run wsecc .*weight_streaming .*-o mynet-ws.wsep$
^run wsetrain mynet.wsep --params mynet.yaml
^run wsetrain mynet-ws.wsep --params mynet.yaml
^run wsetrain mynet.onnx --export .* -o trained.onnx$
^file evaluate.py
^run python3 evaluate.py$'
missing=() line=0
while IFS= read -r pattern; do
	found=$(printf '%s\n' "$steps" | tail -n +$((line + 1)) | grep -n -m1 -e "$pattern" | cut -d: -f1)
	if [ -z "$found" ]; then
		missing+=("$pattern")
	else
		line=$((line + found))
	fi
done <<<"$want"
t_same "the page's steps go from the export to the eval in PyTorch, in order" "" "${missing[*]}"
t_same "a command the page shows without a test-run marker would go unrun: none" "" \
	"$(awk '/^\.\. test-run/ { marked = 1; next } /^[^ ]/ && !/::$/ && NF { marked = 0 }
		/^   \$ / && !marked { print FILENAME ":" FNR ": " $0 }' "$page")"
t_done
