#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks Documentation/netlink/specs/wse.yaml against the driver.

Given the code the kernel's YNL generator made from the spec (its UAPI
header and its kernel policy), compares it with what the driver really
has: every enumerator's value (the caller compiled both headers and
passes what each printed), each request attribute's policy, and which
commands need CAP_NET_ADMIN and which can dump. Prints one line per
difference; exits 1 if there is one.

usage: ynl_spec_check.py GEN_VALUES UAPI_VALUES GEN_POLICY.c DRIVER_GENL.c DRIVER_HEADERS...
"""
import re
import sys


def values(path):
    """NAME VALUE lines, as the compiled printer wrote them."""
    out = {}
    with open(path) as f:
        for line in f:
            name, value = line.split()
            out[name] = int(value)
    return out


def defines(paths):
    """Integer #defines of the driver's headers, for its policy's bounds."""
    out = {}
    for p in paths:
        with open(p) as f:
            for m in re.finditer(r'^#define\s+(\w+)\s+\(?(\d+)U?L*\)?\s*(?:/\*.*)?$', f.read(), re.M):
                out[m.group(1)] = int(m.group(2))
    return out


def evaluate(expr, known):
    """An integer expression of numbers and known names."""
    expr = re.sub(r'(\d+)U?LL\b|(\d+)U\b', lambda m: m.group(1) or m.group(2), expr)
    expr = re.sub(r'\b[A-Z_][A-Z0-9_]*\b', lambda m: str(known[m.group(0)]), expr)
    if not re.fullmatch(r'[\d\s+\-*/()]+', expr):
        raise ValueError(expr)
    return eval(expr)  # only digits and operators remain


def ranges(text, known):
    """struct name -> (min, max) of every netlink_range_validation."""
    out = {}
    for m in re.finditer(r'netlink_range_validation\s+(\w+)\s*=\s*\{(.*?)\}', text, re.S):
        body = m.group(2)
        lo = re.search(r'\.min\s*=\s*([^,\n]+)', body)
        hi = re.search(r'\.max\s*=\s*([^,\n]+)', body)
        out[m.group(1)] = (evaluate(lo.group(1), known) if lo else None,
                           evaluate(hi.group(1), known) if hi else None)
    return out


def policy_entries(text, known):
    """attribute -> normalised policy, from every nla_policy array."""
    rng = ranges(text, known)
    out = {}
    for arr in re.finditer(r'struct nla_policy \w+\[[^\]]*\]\s*=\s*\{(.*?)\n\};', text, re.S):
        for m in re.finditer(r'\[(WSE_A_\w+)\]\s*=\s*(.+?),?\n', arr.group(1) + '\n'):
            attr, spec = m.group(1), m.group(2).strip().rstrip(',')
            t = re.search(r'NLA_(U8|U16|U32|U64|STRING|NESTED|FLAG|BINARY)', spec).group(1)
            lo = hi = None
            fr = re.search(r'NLA_POLICY_FULL_RANGE\(\w+,\s*&(\w+)\)', spec)
            mx = re.search(r'NLA_POLICY_MAX\(\w+,\s*(.+)\)$', spec)
            mn = re.search(r'NLA_POLICY_MIN\(\w+,\s*(.+)\)$', spec)
            rg = re.search(r'NLA_POLICY_RANGE\(\w+,\s*(.+?),\s*(.+)\)$', spec)
            if fr:
                lo, hi = rng[fr.group(1)]
            elif mx:
                hi = evaluate(mx.group(1), known)
            elif mn:
                lo = evaluate(mn.group(1), known)
            elif rg:
                lo, hi = evaluate(rg.group(1), known), evaluate(rg.group(2), known)
            new = (t, lo, hi)
            if attr in out and out[attr] != new:
                raise ValueError(f'{attr}: two policies in one file: {out[attr]} and {new}')
            out[attr] = new
    return out


def ops(text):
    """command -> (admin, do, dump) from genl ops tables."""
    out = {}
    for m in re.finditer(r'\{([^{}]*?\.cmd\s*=\s*(WSE_CMD_\w+)[^{}]*?)\}', text, re.S):
        body, cmd = m.group(1), m.group(2)
        admin, do, dump = out.get(cmd, (False, False, False))
        out[cmd] = (admin or 'GENL_ADMIN_PERM' in body, do or '.doit' in body,
                    dump or '.dumpit' in body)
    return out


def main(argv):
    gen_vals, uapi_vals, gen_policy, driver_genl, headers = (argv[1], argv[2], argv[3],
                                                             argv[4], argv[5:])
    bad = []
    gen, uapi = values(gen_vals), values(uapi_vals)
    for name in sorted(gen):
        if name not in uapi:
            bad.append(f'{name}: in the spec, not in uapi/wse_genl.h')
        elif gen[name] != uapi[name]:
            bad.append(f'{name}: {gen[name]} in the spec, {uapi[name]} in uapi/wse_genl.h')
    known = defines(headers)
    with open(gen_policy) as f:
        gtext = f.read()
    with open(driver_genl) as f:
        dtext = f.read()
    gp, dp = policy_entries(gtext, known), policy_entries(dtext, known)
    for attr in sorted(set(gp) | set(dp)):
        if gp.get(attr) != dp.get(attr):
            bad.append(f'{attr}: policy {gp.get(attr)} in the spec, {dp.get(attr)} in the driver')
    go, do = ops(gtext), ops(dtext)
    for cmd in sorted(set(go) | set(do)):
        if go.get(cmd) != do.get(cmd):
            bad.append(f'{cmd}: (admin, do, dump) {go.get(cmd)} in the spec, '
                       f'{do.get(cmd)} in the driver')
    for line in bad:
        print(line)
    print(f'{len(gen)} enumerators, {len(gp)} request attributes, {len(go)} commands compared; '
          f'{len(bad)} differences')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
