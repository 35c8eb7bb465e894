/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/numformat.h - numbers printed for people, with units: the other half
 * of wse/numparse.h (library wsenum; libwse carries it too).
 *
 * Sizes are in powers of 1024 (B, KiB, MiB, GiB, TiB), clocks and rates in
 * powers of 1000 (Hz, kHz, MHz, GHz). The largest unit the value reaches
 * is used; a value that is a whole number of it prints without decimals
 * ("48 KiB", "850 MHz"), any other with three significant digits and no
 * trailing zeros ("34.1 GiB", "1.5 MiB", "1.1 GHz").
 */
#ifndef WSE_NUMFORMAT_H
#define WSE_NUMFORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Room for any value these print, unit and terminator included. */
#define WSE_NUMFORMAT_MAX	32

/* wse_format_bytes() - @bytes as "48 KiB"; returns @buf. */
char *wse_format_bytes(uint64_t bytes, char *buf, size_t len);

/* wse_format_hz() - @hz as "850 MHz"; returns @buf. */
char *wse_format_hz(uint64_t hz, char *buf, size_t len);

#endif /* WSE_NUMFORMAT_H */
