#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Documentation/netlink/specs/wse.yaml, through the kernel's own YNL tools
# (tools/net/ynl of linux-source-6.12): the schema accepts it, and what
# ynl-gen-c makes of it - the UAPI header, the kernel's policy and ops -
# is what uapi/wse_genl.h and driver/wse_genl.c really have.
. "$(dirname "$0")/tap.sh.inc"
ksrc=/usr/src/linux-source-6.12
ynl=$ksrc/tools/net/ynl

if [ ! -f "$ynl/ynl-gen-c.py" ]; then
	t_skip "YNL" "$ynl is not there (linux-source-6.12)"
	t_done
fi

# ynl finds the schema beside the spec's directory and the tree's top by
# its MAINTAINERS: a kernel-like tree of the two.
root=$t_tmp/root
mkdir -p "$root/Documentation/netlink/specs"
touch "$root/MAINTAINERS"
cp "$ksrc/Documentation/netlink/genetlink-c.yaml" "$root/Documentation/netlink/"
cp Documentation/netlink/specs/wse.yaml "$root/Documentation/netlink/specs/"
spec=$root/Documentation/netlink/specs/wse.yaml

t_run "the schema accepts the spec; ynl-gen-c makes its UAPI header" \
	timeout 120 python3 "$ynl/ynl-gen-c.py" --mode uapi --spec "$spec" --header -o "$t_tmp/gen.h"
t_run "ynl-gen-c makes its kernel policy and ops" \
	timeout 120 python3 "$ynl/ynl-gen-c.py" --mode kernel --spec "$spec" --source -o "$t_tmp/gen.c"

# Every enumerator of the generated header, and the version, printed by a
# program built against it and by one built against uapi/wse_genl.h.
names=$(sed -n 's/^\t\(WSE_[A-Z0-9_]*\)\( = .*\)\?,$/\1/p' "$t_tmp/gen.h" | grep -v '^__')
{
	echo '#include <stdio.h>'
	echo '#include HEADER'
	echo 'int main(void) {'
	for n in $names WSE_GENL_VERSION; do
		echo "	printf(\"$n %lld\\n\", (long long)$n);"
	done
	echo '	return 0; }'
} >"$t_tmp/print.c"
gcc -DHEADER='"gen.h"' -I"$t_tmp" -o "$t_tmp/print-gen" "$t_tmp/print.c" &&
	"$t_tmp/print-gen" >"$t_tmp/gen.values"
gcc -DHEADER='"wse_genl.h"' -Iuapi -o "$t_tmp/print-uapi" "$t_tmp/print.c" &&
	"$t_tmp/print-uapi" >"$t_tmp/uapi.values"
t_same "the spec has every enumerator and the version (count)" \
	"$(wc -l <"$t_tmp/gen.values")" "$(echo "$names WSE_GENL_VERSION" | wc -w)"
for s in WSE_GENL_NAME WSE_GENL_MCGRP_EVENTS; do
	t_same "$s" "$(sed -n "s/^#define $s[[:space:]]*//p" uapi/wse_genl.h)" \
		"$(sed -n "s/^#define $s[[:space:]]*//p" "$t_tmp/gen.h")"
done
t_run "values, request policies and ops match the UAPI header and the driver" \
	python3 tests/host/ynl_spec_check.py "$t_tmp/gen.values" "$t_tmp/uapi.values" \
	"$t_tmp/gen.c" driver/wse_genl.c driver/wse_devices.h driver/wse_link.h
t_done
