// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse: copies between a job's kernel buffer and plain user memory of the
 * current task, through the user pages pinned a batch at a time and
 * copied with memcpy().
 *
 * It is the same single copy copy_from_user() and copy_to_user() make,
 * but those move large blocks with x86 string instructions, which QEMU's
 * TCG (where this driver is tested and measured) emulates one element at
 * a time: 4 MiB took about 250 ms that way. Memory that cannot be pinned
 * (an I/O mapping, say) and addresses that fault are left to the
 * ordinary copy, which also gives the -EFAULT.
 */

#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "wse_user_pages.h"

/* Pages pinned at once: a small array on the stack. */
#define WSE_PIN_BATCH	32

/*
 * Copies @len bytes between user memory at @uaddr and a kernel buffer:
 * into @kdst, or, if it is NULL, out of @ksrc. Returns 0 or -EFAULT.
 */
static int wse_copy_user_pages(u64 uaddr, size_t len, void *kdst, const void *ksrc)
{
	const bool to_user = !kdst;
	struct page *pages[WSE_PIN_BATCH];
	size_t done = 0;

	while (done < len) {
		unsigned long start = (unsigned long)(uaddr + done);
		size_t off = offset_in_page(start);
		size_t chunk = min_t(size_t, len - done, WSE_PIN_BATCH * PAGE_SIZE - off);
		int want = DIV_ROUND_UP(off + chunk, PAGE_SIZE);
		int got, i;

		got = pin_user_pages_fast(start & PAGE_MASK, want, to_user ? FOLL_WRITE : 0,
					  pages);
		if (got <= 0)
			break;
		chunk = min_t(size_t, chunk, (size_t)got * PAGE_SIZE - off);
		for (i = 0; i < got && chunk; i++) {
			size_t n = min_t(size_t, chunk, PAGE_SIZE - off);
			void *p = kmap_local_page(pages[i]);

			if (to_user)
				memcpy(p + off, ksrc + done, n);
			else
				memcpy(kdst + done, p + off, n);
			kunmap_local(p);
			done += n;
			chunk -= n;
			off = 0;
		}
		if (to_user)
			unpin_user_pages_dirty_lock(pages, got, true);
		else
			unpin_user_pages(pages, got);
	}
	if (done == len)
		return 0;
	/* What could not be pinned: the ordinary copy, or its -EFAULT. */
	if (to_user)
		return copy_to_user(u64_to_user_ptr(uaddr + done), ksrc + done, len - done) ?
		       -EFAULT : 0;
	return copy_from_user(kdst + done, u64_to_user_ptr(uaddr + done), len - done) ?
	       -EFAULT : 0;
}

/**
 * wse_copy_from_user_pages() - copy plain user memory into a kernel buffer
 * @dst: the kernel buffer
 * @uaddr: the current task's memory
 * @len: bytes
 *
 * Return: 0, or -EFAULT if some of it cannot be read.
 */
int wse_copy_from_user_pages(void *dst, u64 uaddr, size_t len)
{
	return wse_copy_user_pages(uaddr, len, dst, NULL);
}

/**
 * wse_copy_to_user_pages() - copy a kernel buffer into plain user memory
 * @uaddr: the current task's memory
 * @src: the kernel buffer
 * @len: bytes
 *
 * Return: 0, or -EFAULT if some of it cannot be written.
 */
int wse_copy_to_user_pages(u64 uaddr, const void *src, size_t len)
{
	return wse_copy_user_pages(uaddr, len, NULL, src);
}
