#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The Python package (python/wse) on the host: its ctypes structures
# against the headers (a C program built here prints each field's offset
# and size), errors as exceptions carrying errno and libwse's message,
# and (with python3-torch) the optimizer and scheduler mapping and the
# checkpoint writer (tests/host/python_test.py); the checkpoint layout the
# package assumes against tools/wsetrain's struct (python_ckpt_layout.py).
. "$(dirname "$0")/tap.sh.inc"

py=/usr/bin/python3
cc -std=c11 -Wall -Wextra -Werror -Iuapi -Ilib/include \
	$(pkg-config --cflags libdrm libnl-genl-3.0) tests/host/python_layout.c \
	-o "$t_tmp/layout" 2>"$t_tmp/cc.err" ||
	t_not_ok "layout program builds" "$(cat "$t_tmp/cc.err")"
if [ -x "$t_tmp/layout" ]; then
	"$t_tmp/layout" >"$t_tmp/c.txt"
	PYTHONPATH=python "$py" -c 'import wse._libwse as l; print("\n".join(l.layouts()))' \
		>"$t_tmp/py.txt" 2>&1
	if diff -u "$t_tmp/c.txt" "$t_tmp/py.txt" >"$t_tmp/diff"; then
		t_ok "ctypes layouts match the headers ($(grep -c ' size ' "$t_tmp/c.txt") structs, $(grep -vc ' size ' "$t_tmp/c.txt") fields)"
	else
		t_not_ok "ctypes layouts match the headers" "$(cat "$t_tmp/diff")"
	fi
fi

# The checkpoint layout the package reads and writes, against the C that
# writes it (tests/host/python_ckpt_layout.py): compiled, not run; and a
# field stated one byte off must fail that compile.
ckpt_cc() { # C-FILE: -fsyntax-only over the header and the name record
	cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. -Iuapi -Ilib/include -Ilib/wsep -I"$t_top/build/gen" \
		$(pkg-config --cflags libdrm libnl-genl-3.0) -fsyntax-only -x c "$1"
}
if ! "$py" -c 'import numpy, torch' 2>/dev/null; then
	t_skip "checkpoint layout" "no numpy or torch (tools/install-deps installs python3-torch)"
elif PYTHONPATH=python "$py" tests/host/python_ckpt_layout.py >"$t_tmp/ckpt.c" 2>"$t_tmp/ckpt.err" &&
	PYTHONPATH=python "$py" tests/host/python_ckpt_layout.py --skew lr >"$t_tmp/ckpt-skew.c" 2>>"$t_tmp/ckpt.err"; then
	if ckpt_cc "$t_tmp/ckpt.c" >"$t_tmp/ckpt.out" 2>&1; then
		t_ok "checkpoint layout: python/wse/checkpoint.py's header and name record match the C ($(grep -c _Static_assert "$t_tmp/ckpt.c") checks)"
	else
		t_not_ok "checkpoint layout: python/wse/checkpoint.py's header and name record match the C" \
			"$(grep -E 'error' "$t_tmp/ckpt.out" | head -n 10)"
	fi
	if ! ckpt_cc "$t_tmp/ckpt-skew.c" >"$t_tmp/ckpt-skew.out" 2>&1 &&
		grep -q 'reads ckpt_header.lr at 121' "$t_tmp/ckpt-skew.out"; then
		t_ok "checkpoint layout: the header's lr stated one byte off fails, naming the field"
	else
		t_not_ok "checkpoint layout: the header's lr stated one byte off fails, naming the field" \
			"$(head -n 10 "$t_tmp/ckpt-skew.out")"
	fi
else
	t_not_ok "checkpoint layout: python_ckpt_layout.py runs" "$(cat "$t_tmp/ckpt.err")"
fi

# Installed as a package installs it: the module in Debian's path, and the
# libwse.so.0 beside it is the one it loads.
dest=$t_tmp/dest
if out=$(t_make install-python DESTDIR="$dest" PREFIX=/usr 2>&1); then
	got=$(PYTHONPATH="$dest/usr/lib/python3/dist-packages" WSE_LIBWSE="$t_top/build/dist/lib/libwse.so.0" \
		"$py" -c 'import wse, wse._libwse as l; l.lib(); print(wse.__file__)' 2>&1)
	t_same "make install PREFIX=/usr puts wse in /usr/lib/python3/dist-packages" \
		"$dest/usr/lib/python3/dist-packages/wse/__init__.py" "$got"
else
	t_not_ok "make install-python DESTDIR=... PREFIX=/usr" "$(tail -n 20 <<<"$out")"
fi

out=$(PYTHONPATH=python timeout 600 "$py" tests/host/python_test.py 2>&1)
status=$?
while IFS= read -r line; do
	case $line in
	"ok "*"# SKIP "*) name=${line#ok }; t_skip "${name%% # SKIP *}" "${name#* # SKIP }" ;;
	"ok "*) t_ok "${line#ok }" ;;
	"not ok "*) t_not_ok "${line#not ok }" ;;
	"#"*) echo "$line" ;;
	esac
done <<<"$out"
[ "$status" = 0 ] || t_not_ok "python_test.py exited $status" "$(printf '%s\n' "$out" | tail -n 20)"
t_done
