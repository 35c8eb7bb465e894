// SPDX-License-Identifier: GPL-2.0-only
/*
 * Threads of one process racing on one open file of the device: the
 * objects a file holds (queues, jobs, buffer objects) may be named by one
 * thread while another creates or destroys them. Nothing here checks
 * results beyond the calls' own errors: the judge is the guest kernel's
 * log, which wsevm fails on any KFENCE or SLUB report (tools/check boots
 * this test's guest with slub_debug=FZPU, whose poisoning catches a write
 * into a freed object at once).
 *
 * Issue 25, item 1: QUEUE_CREATE published its queue before writing its
 * id and timeline name, so a QUEUE_DESTROY of the id it was about to get
 * freed the queue under it ("BUG kmalloc-cg-192: Poison overwritten",
 * hundreds of reports a minute).
 */
#include <pthread.h>

#include "kselftest_harness.h"
#include "wse_guest.h"

/* How long each race runs. */
#define RACE_MS		4000

FIXTURE(race) {
	struct guest_fw_device d;
};

FIXTURE_SETUP(race)
{
	ASSERT_EQ(0, guest_fw_device_init(&self->d));
	ASSERT_EQ(0, guest_fw_device_up(&self->d, NULL, NULL));
}

FIXTURE_TEARDOWN(race)
{
	guest_fw_device_fini(&self->d);
}

struct racer {
	int fd;
	int64_t end_ms;
	uint64_t calls, ok;
};

/* Destroys queue 1, 2 or 3 until time is up. */
static void *destroy_low_ids(void *arg)
{
	struct racer *r = arg;
	struct drm_wse_queue_destroy d = { 0 };

	while (guest_now_ms() < r->end_ms) {
		d.queue_id = 1 + r->calls % 3;
		r->ok += !guest_ioctl(r->fd, DRM_IOCTL_WSE_QUEUE_DESTROY, &d);
		r->calls++;
	}
	return NULL;
}

/* Creates queues until time is up; each gets a low id again once destroyed. */
static void *create_queues(void *arg)
{
	struct racer *r = arg;
	uint32_t q;

	while (guest_now_ms() < r->end_ms) {
		r->ok += !guest_queue_create(r->fd, 0, 1, 0, &q);
		r->calls++;
	}
	return NULL;
}

TEST_F(race, queue_create_against_destroy_of_the_id_it_gets)
{
	struct racer create = { .fd = self->d.fd, .end_ms = guest_now_ms() + RACE_MS };
	struct racer destroy = create;
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, destroy_low_ids, &destroy));
	create_queues(&create);
	ASSERT_EQ(0, pthread_join(t, NULL));
	TH_LOG("%llu creates (%llu made), %llu destroys (%llu found)",
	       (unsigned long long)create.calls, (unsigned long long)create.ok,
	       (unsigned long long)destroy.calls, (unsigned long long)destroy.ok);
	/* Both sides really raced: queues were made and destroyed. */
	EXPECT_LT(100, create.ok);
	EXPECT_LT(100, destroy.ok);
}

/* Submits small writes to queue 1 and waits for them, until time is up. */
static void *submit_and_wait(void *arg)
{
	struct racer *r = arg;
	uint32_t h;
	uint64_t job;
	int status;

	if (guest_bo(r->fd, 4096, &h, NULL))
		return NULL;
	while (guest_now_ms() < r->end_ms) {
		/* DEVICE_STATS: any opener may ask, and the firmware answers. */
		if (!guest_submit(r->fd, 1, DRM_WSE_OP_DEVICE_STATS, h, 0,
				  sizeof(struct wse_link_dev_stats), NULL, &job)) {
			r->ok++;
			guest_wait_job(r->fd, 1, job, 1000, &status, NULL);
		}
		r->calls++;
	}
	return NULL;
}

/* Queue 1 is made and destroyed under jobs being submitted to it and waited on. */
TEST_F(race, submit_and_wait_against_queue_destroy)
{
	struct racer sub = { .fd = self->d.fd, .end_ms = guest_now_ms() + RACE_MS };
	struct racer churn = sub;
	struct drm_wse_queue_destroy d = { .queue_id = 1 };
	pthread_t t;
	uint32_t q;

	ASSERT_EQ(0, pthread_create(&t, NULL, submit_and_wait, &sub));
	while (guest_now_ms() < churn.end_ms) {
		if (!guest_queue_create(self->d.fd, 1, 4, 0, &q))
			churn.ok++;
		usleep(churn.calls % 7 * 100);
		guest_ioctl(self->d.fd, DRM_IOCTL_WSE_QUEUE_DESTROY, &d);
		churn.calls++;
	}
	ASSERT_EQ(0, pthread_join(t, NULL));
	TH_LOG("%llu queues made, %llu submissions taken", (unsigned long long)churn.ok,
	       (unsigned long long)sub.ok);
	EXPECT_LT(10, churn.ok);
}

/* Closes a dup of the file while another thread uses the original. */
static void *dup_close(void *arg)
{
	struct racer *r = arg;
	uint32_t q;

	while (guest_now_ms() < r->end_ms) {
		int fd = dup(r->fd);

		if (fd < 0)
			break;
		r->ok += !guest_queue_create(fd, 2, 2, 0, &q);
		close(fd);
		r->calls++;
	}
	return NULL;
}

/* A file's last close while its queues are being made and used elsewhere:
 * the opener's own fd keeps the file, so only the dup goes.
 */
TEST_F(race, dup_close_against_queue_use)
{
	struct racer a = { .fd = self->d.fd, .end_ms = guest_now_ms() + RACE_MS };
	struct racer b = a;
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, dup_close, &a));
	destroy_low_ids(&b);
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_LT(10, a.calls);
}

TEST_HARNESS_MAIN
