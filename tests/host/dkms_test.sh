#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# DKMS itself builds wse.ko from the source tree `make install` put in
# /usr/src/wse-VERSION, for the pinned kernel against its unpacked headers
# (the KDIR the Makefile builds against; --kernelsourcedir points DKMS
# there), with DKMS's own tree in a temporary directory so the machine's
# /var/lib/dkms is untouched. The module it builds is the one `make`
# builds: the same vermagic, dependencies, parameters and description.
. "$(dirname "$0")/tap.sh.inc"
version=$(t_config WSE_VERSION)
kver=$(t_config KVER)
tmp=$t_tmp
kdir=$(t_make -s print-kdir)
dkms=$(command -v dkms || echo /usr/sbin/dkms)

if [ ! -x "$dkms" ]; then
	t_not_ok "dkms is installed" "no dkms: run tools/install-deps (Debian's dkms)"
	t_done
fi
if [ ! -d "$kdir" ] || [ ! -f build/wse.ko ]; then
	t_not_ok "the pinned kernel's headers and build/wse.ko" "run tools/install-deps and make"
	t_done
fi
if ! out=$(t_make install DESTDIR="$tmp/root" PREFIX=/usr 2>&1); then
	t_not_ok "make install DESTDIR=..." "$(tail -n 20 <<<"$out")"
	t_done
fi
src=$tmp/root/usr/src
opts=(--dkmstree "$tmp/dkms" --sourcetree "$src" -m wse -v "$version")
mkdir -p "$tmp/dkms"

t_run "dkms add" "$dkms" add "${opts[@]}"
t_run "dkms build -k $kver --kernelsourcedir KDIR" \
	"$dkms" build "${opts[@]}" -k "$kver" --kernelsourcedir "$kdir"
t_same "dkms status" "wse/$version, $kver, x86_64: built" \
	"$("$dkms" status "${opts[@]}" 2>/dev/null)"
ko=$tmp/dkms/wse/$version/$kver/x86_64/module/wse.ko
if [ -f "$ko" ]; then
	t_ok "DKMS made wse.ko"
	for field in vermagic depends parm description license name; do
		t_same "its $field is make's" "$(/sbin/modinfo -F "$field" build/wse.ko)" \
			"$(/sbin/modinfo -F "$field" "$ko")"
	done
else
	t_not_ok "DKMS made wse.ko" "$(cat "$tmp/dkms/wse/$version/build/make.log" 2>/dev/null | tail -n 20)"
fi
t_run "dkms remove" "$dkms" remove "${opts[@]}" -k "$kver"
t_done
