// SPDX-License-Identifier: GPL-2.0-only
/* wsectl monitor: the "events" multicast group, one line per event. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "wsectl.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int wsectl_monitor(const struct wsectl_opts *o, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct wse_event ev;
	struct wse_ctl *ctl;
	long seen = 0;
	int ret;

	(void)argc;
	(void)argv;
	if (wsectl_open(&ctl))
		return WSECTL_FAILED;
	ret = wse_ctl_subscribe(ctl);
	if (ret) {
		ret = wsectl_fail(ctl, "subscribing to events", ret);
		wse_ctl_close(ctl);
		return ret;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Tell a script waiting on our output that events will be seen. */
	if (!o->json)
		printf("monitoring wse events\n");
	fflush(stdout);
	while (!stop && (o->count < 0 || seen < o->count)) {
		ret = wse_ctl_next_event(ctl, (int)o->timeout_ms, &ev);
		if (ret == -EINTR)
			continue;
		if (ret == -ETIMEDOUT)
			break;
		if (ret) {
			ret = wsectl_fail(ctl, "reading events", ret);
			wse_ctl_close(ctl);
			return ret;
		}
		seen++;
		if (o->json)
			wsectl_json_print(wsectl_json_event(&ev));
		else
			printf("device %u: %s: %s%s%s (peer %s)\n", ev.index,
			       wse_event_name(ev.event), ev.reason, ev.err ? ": " : "",
			       ev.err ? strerror((int)ev.err) : "", ev.peer);
		fflush(stdout);
	}
	wse_ctl_close(ctl);
	return WSECTL_OK;
}
