#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make install into a DESTDIR, as a package build does, and use what it
# installed as a user and a packager would: every file where it belongs,
# the tools' --version and --help, libwse.so's soname and exports against
# its headers, examples/wse-hello built with `pkg-config --cflags --libs
# libwse` (shared and static) and run, the library in Debian's multiarch
# directory and the UAPI header in wse's own (/usr/include/wse/drm, never
# linux-libc-dev's /usr/include/drm), each man page through `man -l`, the
# udev rule, sysusers file and header naming one group, wsefwd finding its
# installed data, the DKMS tree; then make uninstall leaving nothing.
. "$(dirname "$0")/tap.sh.inc"
version=$(t_config WSE_VERSION)
soversion=$(t_config WSE_SOVERSION)
tmp=$t_tmp
dest=$tmp/root
# Where Debian puts libraries for this machine (lib/x86_64-linux-gnu).
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
libdir=usr/lib${multiarch:+/$multiarch}
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /usr/lib/systemd/system)

if ! out=$(t_make install DESTDIR="$dest" PREFIX=/usr 2>&1); then
	t_not_ok "make install DESTDIR=... PREFIX=/usr" "$(tail -n 20 <<<"$out")"
	t_done
fi
t_ok "make install DESTDIR=... PREFIX=/usr"

# --- the files --------------------------------------------------------------
want=(
	usr/bin/wsectl usr/bin/wsetrain usr/bin/wsecc usr/bin/wsefwd usr/bin/wse-appliance
	usr/bin/wsebench usr/bin/wsereport
	"$libdir/libwse.so.$version" "$libdir/libwse.so.$soversion" "$libdir/libwse.so"
	"$libdir/libwse.a" "$libdir/pkgconfig/libwse.pc"
	usr/include/wse/wse.h usr/include/wse/ctl.h usr/include/wse/drm/wse_accel.h
	usr/share/man/man8/wsectl.8 usr/share/man/man8/wsefwd.8 usr/share/man/man8/wse-appliance.8
	usr/share/man/man1/wsetrain.1
	usr/share/man/man1/wsecc.1 usr/share/man/man1/wsebench.1 usr/share/man/man1/wsereport.1
	usr/share/man/man3/libwse.3 usr/share/man/man3/wse.3py
	usr/share/bash-completion/completions/wse
	usr/share/wse/models/fc-mnist usr/share/wse/timing/wse2.params
	usr/share/wse/params/fc-mnist.yaml usr/share/wse/params/cnn-tiny.yaml
	usr/share/wse/params/gpt-tiny.yaml
	usr/lib/udev/rules.d/60-wse.rules usr/lib/sysusers.d/wse.conf
	"${unitdir#/}/wsefwd@.service" "${unitdir#/}/wse-appliance.service"
	"usr/src/wse-$version/dkms.conf" "usr/src/wse-$version/Kbuild"
	"usr/src/wse-$version/driver/wse_drv.c" "usr/src/wse-$version/uapi/drm/wse_accel.h"
)
missing=()
for f in "${want[@]}"; do
	[ -e "$dest/$f" ] || missing+=("$f")
done
t_same "every file is installed" "" "${missing[*]}"
t_same "the soname link" "libwse.so.$version" "$(readlink "$dest/$libdir/libwse.so.$soversion")"
# Nothing in another package's namespace or beside the multiarch directory.
t_same "nothing in /usr/include/drm or plain /usr/lib" "" \
	"$(cd "$dest" && find usr/include/drm usr/lib -maxdepth 1 -name '*wse*' 2>/dev/null)"

# bash-completion loads completions/TOOL when TOOL is first completed: a
# link to the one file, which must then complete TOOL.
comp=$dest/usr/share/bash-completion/completions
for t in $(t_make -s print-install-progs); do
	if [ "$(readlink "$comp/$t")" = wse ] &&
	   bash -c '. "$1" && complete -p "$2"' _ "$comp/$t" "$t" >/dev/null 2>&1; then
		t_ok "bash-completion finds $t's completion"
	else
		t_not_ok "bash-completion finds $t's completion" "$(ls -l "$comp/$t" 2>&1)"
	fi
done

# --- the tools ----------------------------------------------------------------
for t in wsectl wsetrain wsecc wsefwd wse-appliance wsebench wsereport; do
	t_same "$t --version" "$t (wse) $version" "$("$dest/usr/bin/$t" --version | head -n 1)"
	t_run "$t --help" "$dest/usr/bin/$t" --help
done
# The params files' installed place, as the man pages give it.
for m in man1/wsetrain.1 man1/wsecc.1; do
	t_same "$m says where the params files are" "yes" \
		"$(MANWIDTH=1000 man -l "$dest/usr/share/man/$m" 2>/dev/null |
			grep -q '/usr/share/wse/params/' && echo yes)"
done
# The installed wsefwd reads its timing parameters from PREFIX/share/wse.
sock=$tmp/fwd.sock
"$dest/usr/bin/wsefwd" --listen "unix:$sock" >"$tmp/fwd.log" 2>&1 &
fwd=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
kill "$fwd" 2>/dev/null
wait "$fwd" 2>/dev/null
if grep -q "parameters from $dest/usr/bin/../share/wse/timing/wse2.params" "$tmp/fwd.log"; then
	t_ok "installed wsefwd finds its timing parameters"
else
	t_not_ok "installed wsefwd finds its timing parameters" "$(cat "$tmp/fwd.log")"
fi

# --- the library ----------------------------------------------------------------
lib=$dest/$libdir/libwse.so.$version
t_same "libwse's soname" "libwse.so.$soversion" \
	"$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
# What it exports is what the installed headers declare, no more, no less.
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort)
declared=$(grep -ohE '\bwse_[a-z0-9_]+\(' "$dest"/usr/include/wse/*.h | tr -d '(' | sort -u)
t_same "libwse exports exactly the headers' functions" "$declared" "$exported"
# Nor carries, even unexported, the link's test support, frame I/O or host
# client: only what its own functions call (lib/wse/module.mk).
t_same "libwse carries no test support, frame I/O or link client" "" \
	"$(nm "$lib" | awk '{ print $NF }' | grep -E '^(wse_link_malform|wse_link_client_|wse_link_send$|wse_link_recv$)' | sort -u | tr '\n' ' ')"
t_same "the header's group is the udev rule's" \
	"$(sed -n 's/^#define WSE_ACCESS_GROUP[[:space:]]*"\(.*\)"/\1/p' "$dest/usr/include/wse/wse.h")" \
	"$(sed -n 's/.*GROUP="\([^"]*\)".*/\1/p' "$dest/usr/lib/udev/rules.d/60-wse.rules")"
rule=$(grep -v '^#' "$dest/usr/lib/udev/rules.d/60-wse.rules")
# systemd's convention for accel nodes (its 50-udev-default and 70-uaccess).
t_same "the rule gives the nodes to group render" "render" \
	"$(sed -n 's/.*GROUP="\([^"]*\)".*/\1/p' <<<"$rule")"
t_same "the rule's mode is 0660" "0660" "$(sed -n 's/.*MODE="\([^"]*\)".*/\1/p' <<<"$rule")"
t_same "the rule tags the nodes uaccess" 'TAG+="uaccess"' "$(grep -o 'TAG+="uaccess"' <<<"$rule")"
t_same "the sysusers file creates that group" "g render -" \
	"$(grep -v '^#' "$dest/usr/lib/sysusers.d/wse.conf")"
# systemd-sysusers itself, on an empty root of its own, makes the group.
if command -v systemd-sysusers >/dev/null; then
	mkdir -p "$tmp/sysroot/etc" "$tmp/sysroot/usr/lib/sysusers.d"
	cp "$dest/usr/lib/sysusers.d/wse.conf" "$tmp/sysroot/usr/lib/sysusers.d/"
	systemd-sysusers --root="$tmp/sysroot" >"$tmp/sysusers.log" 2>&1
	t_same "systemd-sysusers makes group render from it" "render" \
		"$(cut -d: -f1 "$tmp/sysroot/etc/group" 2>/dev/null)"
else
	t_skip "systemd-sysusers makes group render from it" "no systemd-sysusers: run tools/install-deps (systemd)"
fi

# examples/wse-hello against the installed library, found by pkg-config:
# libwse.pc with its prefix moved to where DESTDIR put /usr (what it says
# beyond the prefix is what an installed system reads).
mkdir -p "$tmp/pkgconfig"
pc=$dest/$libdir/pkgconfig/libwse.pc
t_same "libwse.pc's libdir" "/$libdir" "$(pkg-config --define-variable=prefix=/usr --variable=libdir "$pc")"
t_same "libwse.pc's includedir" "/usr/include" \
	"$(pkg-config --define-variable=prefix=/usr --variable=includedir "$pc")"
sed "s|^prefix=/usr$|prefix=$dest/usr|" "$pc" >"$tmp/pkgconfig/libwse.pc"
export PKG_CONFIG_PATH=$tmp/pkgconfig
t_same "pkg-config --modversion libwse" "$version" "$(pkg-config --modversion libwse)"
# The tree's UAPI consumers build against the installed header alone: no
# -Iuapi, only what pkg-config says.
# shellcheck disable=SC2046
if out=$(gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fsyntax-only -isystem "$(t_make -s print-ksrc)/tools/testing/selftests" \
		-Wno-unused-parameter $(pkg-config --cflags libwse) tests/host/uapi_layout_test.c 2>&1); then
	t_ok "uapi_layout_test.c builds with <drm/wse_accel.h> from /usr/include/wse"
else
	t_not_ok "uapi_layout_test.c builds with <drm/wse_accel.h> from /usr/include/wse" "$out"
fi
printf '#include <drm/wse_accel.h>\n#include <wse/wse.h>\n#include <wse/ctl.h>\nint main(void) { return DRM_IOCTL_WSE_GET_INFO == 0; }\n' >"$tmp/headers.c"
# shellcheck disable=SC2046
if out=$(gcc -std=c11 -Wall -Wextra -Werror -o "$tmp/headers" "$tmp/headers.c" $(pkg-config --cflags libwse) 2>&1) &&
   out=$(gcc -std=c11 -E "$tmp/headers.c" $(pkg-config --cflags libwse) 2>&1 | grep -o '"[^"]*wse_accel.h"' | sort -u) &&
   [ "$out" = "\"$dest/usr/include/wse/drm/wse_accel.h\"" ]; then
	t_ok "<drm/wse_accel.h>, <wse/wse.h> and <wse/ctl.h> from the installed tree"
else
	t_not_ok "<drm/wse_accel.h>, <wse/wse.h> and <wse/ctl.h> from the installed tree" "$out"
fi
# shellcheck disable=SC2046 # pkg-config's flags are words
if out=$(gcc -std=c11 -Wall -Wextra -Werror -o "$tmp/wse-hello" examples/wse-hello.c \
		$(pkg-config --cflags --libs libwse) 2>&1); then
	t_ok "wse-hello builds with pkg-config --cflags --libs libwse"
else
	t_not_ok "wse-hello builds with pkg-config --cflags --libs libwse" "$out"
fi
t_same "wse-hello loads the installed libwse.so.$soversion" "$dest/$libdir/libwse.so.$soversion" \
	"$(LD_LIBRARY_PATH=$dest/$libdir ldd "$tmp/wse-hello" | awk '$1 == "libwse.so.'"$soversion"'" { print $3 }')"
t_run "wse-hello --help runs" env LD_LIBRARY_PATH="$dest/$libdir" "$tmp/wse-hello" --help
# Without the module there is no device: the library says so, not the loader.
out=$(LD_LIBRARY_PATH=$dest/$libdir "$tmp/wse-hello" 2>&1)
case "$out" in
*"cannot open device 'any'"*) t_ok "wse-hello reaches libwse's own error" ;;
*) t_not_ok "wse-hello reaches libwse's own error" "$out" ;;
esac
# shellcheck disable=SC2046
if out=$(gcc -std=c11 -o "$tmp/wse-hello-static" examples/wse-hello.c \
		$(pkg-config --cflags libwse) -Wl,-Bstatic -lwse -Wl,-Bdynamic \
		$(pkg-config --static --libs libwse | sed 's/-lwse\b//') 2>&1) &&
   ! ldd "$tmp/wse-hello-static" | grep -q libwse; then
	t_ok "wse-hello links libwse.a with pkg-config --static"
else
	t_not_ok "wse-hello links libwse.a with pkg-config --static" "$out"
fi
unset PKG_CONFIG_PATH

# --- the man pages ----------------------------------------------------------------
for page in "$dest"/usr/share/man/man*/*; do
	name=$(basename "$page")
	out=$(MANWIDTH=80 man -l "$page" 2>"$tmp/man.err")
	status=$?
	case "$name" in
	*.3 | *.3py) exits="RETURN VALUE" ;;
	*) exits="EXIT STATUS" ;;
	esac
	# Anything on stderr fails: an error, or a warning (tbl's included).
	errors=$(cat "$tmp/man.err")
	if [ "$status" = 0 ] && [ -z "$errors" ] && grep -q "^NAME" <<<"$out" &&
	   grep -q "^SYNOPSIS" <<<"$out" && grep -q "^$exits" <<<"$out"; then
		t_ok "man -l $name renders, with SYNOPSIS and $exits"
	else
		t_not_ok "man -l $name renders, with SYNOPSIS and $exits" "status $status" \
			"$errors" "$(head -n 12 <<<"$out")"
	fi
done

# The pages they name are installed, where the pages say.
named=$(sed 's/\\-/-/g' "$dest"/usr/share/man/man*/* | grep -o -e '@DOCDIR@' -e '/usr/share/doc/wse/[A-Za-z0-9_-]*\.rst' | sort -u)
missing=()
for doc in $named; do
	[ -f "$dest$doc" ] || missing+=("$doc")
done
t_same "the man pages name installed documentation ($(wc -w <<<"$named") pages)" "" "${missing[*]}"

# --- DKMS ----------------------------------------------------------------------
t_same "dkms.conf names this version" "PACKAGE_VERSION=\"$version\"" \
	"$(grep '^PACKAGE_VERSION=' "$dest/usr/src/wse-$version/dkms.conf")"

# --- and away again -----------------------------------------------------------------
if out=$(t_make uninstall DESTDIR="$dest" PREFIX=/usr 2>&1); then
	t_same "make uninstall leaves no file" "" "$(cd "$dest" && find . ! -type d | sort | tr '\n' ' ')"
else
	t_not_ok "make uninstall" "$(tail -n 20 <<<"$out")"
fi
t_done
