#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The man pages made from Documentation/*.rst (build/man/): one for every
# page that names a manual section, each without a warning from man
# --warnings or from groff -ww (tbl's "table wider than line" included) at
# 80 columns, and standing alone: no pointer into the source tree's
# Documentation/, every other page it names one that make install
# installs (as @DOCDIR@/NAME.rst until then), and its sections on the
# source tree and on measurements reduced to where those pages have them.
. "$(dirname "$0")/tap.sh.inc"
export MANWIDTH=80

for rst in Documentation/*.rst; do
	section=$(sed -n 's/^:Manual section: *\([0-9][a-z]*\).*/\1/p' "$rst")
	[ -n "$section" ] || continue
	name=$(basename "$rst" .rst)
	page=build/man/$name.$section
	if [ ! -f "$page" ]; then
		t_not_ok "$name.$section is built" "no $page: run make"
		continue
	fi
	t_same "man --warnings -l $name.$section: no warning" "" \
		"$(man --warnings -l "$page" 2>&1 >/dev/null)"
	t_same "groff -ww $name.$section: no warning" "" \
		"$(preconv "$page" | groff -t -man -ww -z 2>&1)"
	t_same "$name.$section: no pointer into the tree's Documentation/" "" \
		"$(man -l "$page" 2>/dev/null | grep -o 'Documentation/[^ ]*')"
	# rst2man writes a '-' in text as '\-'.
	missing=()
	for doc in $(sed 's/\\-/-/g' "$page" | grep -o '@DOCDIR@/[A-Za-z0-9_-]*\.rst' | sort -u); do
		[ -f "Documentation/${doc#@DOCDIR@/}" ] || missing+=("$doc")
	done
	t_same "$name.$section: each page it names is one make install installs" "" "${missing[*]}"
	# Sections on the source tree or on measurements made here hold only
	# where the installed documentation has them (man-sections.awk).
	t_same "$name.$section: its Files, Source, Tests and Measured sections point to $name.rst" "" \
		"$(MANWIDTH=1000 man -l "$page" 2>/dev/null | awk -v name="$name" '
			/^[^ ]/ { dev = $0 ~ /^(FILES|SOURCE|TESTS|MEASURED)$/; title = $0; next }
			dev && NF { sub(/^ +/, ""); if ($0 !~ "^In the documentation installed with wse: @DOCDIR@/" name "\\.rst, \".*\"\\.$") print title ": " $0 }')"
done
t_done
