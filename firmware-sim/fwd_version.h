/* SPDX-License-Identifier: GPL-2.0-only */
/* The firmware version wsefwd reports in HELLO (at most 32 characters). */
#ifndef FWD_VERSION_H
#define FWD_VERSION_H

#define FWD_VERSION	"wsefwd 0.1"

#endif /* FWD_VERSION_H */
