/* SPDX-License-Identifier: GPL-2.0-only */
/* wse: copies between kernel buffers and plain user memory, page by page. */
#ifndef WSE_USER_PAGES_H
#define WSE_USER_PAGES_H

#include <linux/types.h>

int wse_copy_from_user_pages(void *dst, u64 uaddr, size_t len);
int wse_copy_to_user_pages(u64 uaddr, const void *src, size_t len);

#endif /* WSE_USER_PAGES_H */
