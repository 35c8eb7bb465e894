// SPDX-License-Identifier: GPL-2.0-only
/* The --fault-* knobs. Each decision is logged so a test failure reads clearly. */
#include <errno.h>
#include <time.h>

#include "fwd_fault.h"
#include "fwd_log.h"

void fwd_fault_init(struct fwd_fault *ft, const struct fwd_fault_config *cfg)
{
	ft->cfg = cfg;
	ft->rng = cfg->seed;
	ft->next_kind = 0;
	ft->silent_logged = false;
	ft->malformed_logged = false;
}

bool fwd_fault_drop_at_accept(const struct fwd_fault_config *cfg)
{
	return cfg->drop_after == 0;
}

bool fwd_fault_drop(const struct fwd_fault *ft, uint64_t frames_rx)
{
	return ft->cfg->drop_after > 0 && frames_rx >= (uint64_t)ft->cfg->drop_after;
}

bool fwd_fault_silent(struct fwd_fault *ft, uint64_t frames_rx)
{
	if (ft->cfg->silent_after < 0 || frames_rx <= (uint64_t)ft->cfg->silent_after)
		return false;
	if (!ft->silent_logged) {
		fwd_warn("fault: silent after %lld frames: frame %llu and later go unanswered",
			 (long long)ft->cfg->silent_after, (unsigned long long)frames_rx);
		ft->silent_logged = true;
	}
	return true;
}

bool fwd_fault_malformed(struct fwd_fault *ft, uint64_t frames_rx)
{
	if (ft->cfg->malformed_after < 0 || frames_rx <= (uint64_t)ft->cfg->malformed_after)
		return false;
	if (!ft->malformed_logged) {
		fwd_warn("fault: malformed after %lld frames: the reply to frame %llu and later ones are broken",
			 (long long)ft->cfg->malformed_after, (unsigned long long)frames_rx);
		ft->malformed_logged = true;
	}
	return true;
}

enum wse_link_malform fwd_fault_next_kind(struct fwd_fault *ft)
{
	if (ft->cfg->malformed_kind >= 0)
		return (enum wse_link_malform)ft->cfg->malformed_kind;
	return (enum wse_link_malform)(ft->next_kind++ % WSE_LINK_MAL_COUNT);
}

bool fwd_fault_corrupt(const struct fwd_fault *ft, uint64_t frame_tx)
{
	return ft->cfg->corrupt_frame > 0 && frame_tx == (uint64_t)ft->cfg->corrupt_frame;
}

void fwd_fault_delay(const struct fwd_fault *ft)
{
	struct timespec ts = {
		.tv_sec = ft->cfg->delay_ms / 1000,
		.tv_nsec = (long)(ft->cfg->delay_ms % 1000) * 1000000,
	};

	if (!ft->cfg->delay_ms)
		return;
	/* Signals are blocked outside the main poll, so this is not cut short. */
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}
