# SPDX-License-Identifier: GPL-2.0-only
"""Prints a C file that holds python/wse/checkpoint.py's idea of the
checkpoint layout against the C that writes it: a _Static_assert for the
offset and size of every field of the header (struct ckpt_header, in
tools/wsetrain/checkpoint.c, included) and of a parameter-name record (the
PNM_* offsets of lib/wsep/wsep_le.h, the sizes of struct wsep_param_name's
members). python_test.sh compiles it with -fsyntax-only: a field that moved
on either side fails the build, naming the field.

  python_ckpt_layout.py [--skew FIELD]

--skew FIELD states FIELD's header offset one byte off, to show that the
check catches it.
"""
import sys

from wse import checkpoint as ck


def main():
    skew = sys.argv[2] if len(sys.argv) == 3 and sys.argv[1] == "--skew" else None
    out = ['#include "tools/wsetrain/checkpoint.c"', '#include "wsep_le.h"', ""]

    def check(cond, what):
        out.append(f'_Static_assert({cond}, "python/wse/checkpoint.py reads {what}; the C differs");')

    for name, at, size in ck.layout(ck.CKPT_FIELDS):
        at += name == skew
        check(f"offsetof(struct ckpt_header, {name}) == {at}", f"ckpt_header.{name} at {at}")
        check(f"sizeof(((struct ckpt_header *)0)->{name}) == {size}", f"ckpt_header.{name} of {size} bytes")
    check(f"sizeof(struct ckpt_header) == {ck.CKPT_HEADER.size}", f"a header of {ck.CKPT_HEADER.size} bytes")
    check(f'sizeof(CKPT_MAGIC) == {len(ck.CKPT_MAGIC)}', "the magic's NUL")
    for name, at, size in ck.layout(ck.NAME_FIELDS):
        check(f"PNM_{name.upper()} == {at}", f"a name record's {name} at {at}")
        check(f"sizeof(((struct wsep_param_name *)0)->{name}) == {size}", f"a name record's {name} of {size} bytes")
    check(f"WSEP_PARAM_NAME_RECORD == {ck.NAME_RECORD.size}", f"a name record of {ck.NAME_RECORD.size} bytes")
    check(f"WSEP_PARAM_TORCH_TRANSPOSED == {ck.TRANSPOSED}", "the transposed flag")
    print("\n".join(out))


if __name__ == "__main__":
    main()
