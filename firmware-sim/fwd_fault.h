/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fault injection for tests: the --fault-* knobs, evaluated per connection
 * against the frames received and sent so far (counted from 1).
 */
#ifndef FWD_FAULT_H
#define FWD_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "fwd_config.h"

struct fwd_fault {
	const struct fwd_fault_config *cfg;
	uint64_t rng;
	unsigned int next_kind;
	bool silent_logged;
	bool malformed_logged;
};

void fwd_fault_init(struct fwd_fault *ft, const struct fwd_fault_config *cfg);
/* --fault-drop-after 0: close a host's link as soon as it is accepted. */
bool fwd_fault_drop_at_accept(const struct fwd_fault_config *cfg);
/* Close the link now that frame @frames_rx arrived? */
bool fwd_fault_drop(const struct fwd_fault *ft, uint64_t frames_rx);
/* Ignore frame @frames_rx (and all later ones)? Logs the first time. */
bool fwd_fault_silent(struct fwd_fault *ft, uint64_t frames_rx);
/* Replace the reply to frame @frames_rx by a malformed frame? */
bool fwd_fault_malformed(struct fwd_fault *ft, uint64_t frames_rx);
/* Which broken frame to send next. */
enum wse_link_malform fwd_fault_next_kind(struct fwd_fault *ft);
/* Corrupt sent frame number @frame_tx? */
bool fwd_fault_corrupt(const struct fwd_fault *ft, uint64_t frame_tx);
/* Sleeps for --fault-delay-ms before a reply. */
void fwd_fault_delay(const struct fwd_fault *ft);

#endif /* FWD_FAULT_H */
