// SPDX-License-Identifier: GPL-2.0-only
/*
 * Ctrl-C (SIGINT) and SIGTERM. The signals are blocked in every thread
 * but one of their own, which waits for them with sigwait(): no system
 * call of the run is ever interrupted (an io_uring wait or a RUN cut short
 * by EINTR would be a failure), and the run looks at train_interrupted()
 * between chunks of steps, where it can write a checkpoint and stop
 * cleanly. A second signal stops the process at once.
 *
 * Evaluating or predicting there is nothing to save: the first signal
 * ends the process at once (train_interrupt_exit_saying()), whatever RUN
 * or transfer is in flight (the driver cancels what the closing device
 * file leaves), instead of waiting for a device that may never answer.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "train.h"

static atomic_int caught;
static sigset_t watched, before;
/* What the first signal stops, when it stops the process at once; else NULL. */
static _Atomic(const char *) exit_note;
/* A temporary file to remove when a signal ends the process, or NULL. */
static _Atomic(const char *) leftover;
/* Training: is there somewhere to write a checkpoint? */
static atomic_bool checkpoints = true;

/* A message from the watcher: write(2), nothing buffered. */
static void say(const char *msg)
{
	if (write(STDERR_FILENO, msg, strlen(msg)) < 0)
		return;	/* stderr gone: nothing to tell */
}

static void remove_leftover(void)
{
	const char *path = atomic_load(&leftover);

	if (path)
		unlink(path);
}

static void *watch(void *arg)
{
	int sig;

	(void)arg;
	for (;;) {
		const char *note;

		if (sigwait(&watched, &sig))
			continue;
		note = atomic_load(&exit_note);
		if (note) {
			char msg[PATH_MAX + 128];

			snprintf(msg, sizeof(msg), "\nwsetrain: interrupted (%s): %s\n",
				 strsignal(sig), note);
			say(msg);
			remove_leftover();
			_exit(128 + sig);
		}
		if (!atomic_exchange(&caught, sig)) {
			say(atomic_load(&checkpoints) ?
			    "\nwsetrain: interrupted: finishing the current chunk of steps and writing a checkpoint (again to stop at once)\n" :
			    "\nwsetrain: interrupted: finishing the current chunk of steps; no checkpoint is written (no --checkpoint or run directory; again to stop at once)\n");
		} else {
			say("\nwsetrain: stopped without a checkpoint\n");
			_exit(128 + sig);
		}
	}
	return NULL;
}

int train_interrupt_start(void)
{
	pthread_t t;
	int ret;

	sigemptyset(&watched);
	sigaddset(&watched, SIGINT);
	sigaddset(&watched, SIGTERM);
	ret = pthread_sigmask(SIG_BLOCK, &watched, &before);
	if (!ret)
		ret = pthread_create(&t, NULL, watch, NULL);
	if (!ret)
		ret = pthread_detach(t);
	if (ret)
		return train_fail("cannot watch for Ctrl-C: %s", strerror(ret));
	return 0;
}

void train_interrupt_exit_saying(const char *what)
{
	atomic_store(&exit_note, what);
}

void train_interrupt_remove_on_exit(const char *path)
{
	atomic_store(&leftover, path);
}

void train_interrupt_checkpoints(bool any)
{
	atomic_store(&checkpoints, any);
}

int train_interrupted(void)
{
	return atomic_load(&caught);
}

void train_interrupt_child(void)
{
	pthread_sigmask(SIG_SETMASK, &before, NULL);
}
