#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# DKMS itself builds wse.ko from the source tree `make install` put in
# /usr/src/wse-VERSION, for the pinned kernel against its unpacked headers
# (the KDIR the Makefile builds against; --kernelsourcedir points DKMS
# there), with DKMS's own tree in a temporary directory so the machine's
# /var/lib/dkms is untouched. The module it builds is the one `make`
# builds: the same vermagic, dependencies, parameters and description.
# Where the driver cannot build (a kernel before 6.12, or one without
# CONFIG_DRM_ACCEL), dkms.conf's BUILD_EXCLUSIVE_* make DKMS skip it
# (exit 77) instead of failing to compile.
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

# dkms_skips NAME KVER KSRC: DKMS refuses to build for KVER against KSRC
# with its BUILD_EXCLUSIVE exit status, 77, before compiling anything.
dkms_skips() {
	local out status
	out=$("$dkms" build "${opts[@]}" -k "$2" --kernelsourcedir "$3" 2>&1)
	status=$?
	if [ "$status" = 77 ] && grep -q BUILD_EXCLUSIVE <<<"$out"; then
		t_ok "$1"
	else
		t_not_ok "$1" "dkms build -k $2 exited $status, not 77" "$(tail -n 5 <<<"$out")"
	fi
}
dkms_skips "skipped on 6.1, before accel" 6.1.0-28-amd64 "$kdir"
dkms_skips "skipped on 6.11, before io_uring_cmd_to_pdu()" 6.11.10-amd64 "$kdir"
# The pinned kernel's headers with accel switched off in their .config.
mkdir -p "$tmp/noaccel"
sed 's/^CONFIG_DRM_ACCEL=.*/# CONFIG_DRM_ACCEL is not set/' "$kdir/.config" >"$tmp/noaccel/.config"
dkms_skips "skipped on a kernel without CONFIG_DRM_ACCEL" "$kver" "$tmp/noaccel"
# The kernel releases the regex takes: 6.12 and after.
exclusive=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$src/wse-$version/dkms.conf")
taken=()
for release in 5.15.0-1 6.1.0-28-amd64 6.2.0 6.11.10 6.12.0 "$kver" 6.13.2 6.20.1 7.0.0 10.1.0; do
	[[ $release =~ $exclusive ]] && taken+=("$release")
done
t_same "BUILD_EXCLUSIVE_KERNEL takes 6.12 and later" "6.12.0 $kver 6.13.2 6.20.1 7.0.0 10.1.0" \
	"${taken[*]}"

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
