/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to libwselink's payload codecs: filling a NUL-padded text field,
 * and the refusal of a payload that breaks its rules.
 */
#ifndef LINK_PAYLOAD_FIELDS_H
#define LINK_PAYLOAD_FIELDS_H

#include <string.h>

#include "wse/link_payloads.h"

/* A string into a NUL-padded text field (cut at its size). */
static inline void text_out(char *field, size_t cap, const char *s)
{
	size_t n = strnlen(s, cap);

	memcpy(field, s, n);
	memset(field + n, 0, cap - n);
}

/* A payload that breaks its rules: @what says which. */
static inline int bad(struct wse_link_err *err, const char *what)
{
	return wse_link_err_set(err, WSE_LINK_E_PROTO, WSE_LINK_CHECK_PAYLOAD, "%s", what);
}

#endif /* LINK_PAYLOAD_FIELDS_H */
