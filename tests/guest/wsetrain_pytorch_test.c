// SPDX-License-Identifier: GPL-2.0-only
/*
 * Training through the driver against PyTorch in the guest (the host's
 * /usr: tools/wsevm --host-usr), in a program of its own: importing
 * PyTorch under TCG takes minutes, which run-tests' limit for one program
 * does not have to spare for the others.
 *
 * The device: the appliance wsevm started on the host (/wse/appliance-addr).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wse/wse.h"
#include "wse_guest.h"

#define FORTUNES	"/usr/share/games/fortunes/fortunes"
#define OUT_MAX		(64 << 10)

FIXTURE(pytorch) {
	struct wse_ctl *ctl;
	struct wse_dev_status dev;
	bool attached;
	char *out;
};

FIXTURE_SETUP(pytorch)
{
	char addr[160];

	self->attached = false;
	self->out = malloc(OUT_MAX);
	ASSERT_NE(NULL, self->out);
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	if (!guest_host_appliance(addr))
		SKIP(return, "needs an appliance on the host (tools/wsevm --appliance 1)");
	ASSERT_EQ(0, guest_attach(self->ctl, addr, 0, &self->dev));
	self->attached = true;
}

FIXTURE_TEARDOWN(pytorch)
{
	if (self->attached)
		wse_ctl_detach(self->ctl, self->dev.index);
	wse_ctl_close(self->ctl);
	free(self->out);
}

/*
 * Issue 26's training far larger than the wafer, at the size of a test:
 * a 2-block GPT exported by PyTorch, compiled for weight streaming with
 * bf16 matrix products and micro-batches of 2 (4 a batch, their gradients
 * accumulated before MemoryX updates), trained through the driver on the
 * appliance; PyTorch trains the same initial weights on the same batches
 * under bf16 autocast, here in the guest (models/compare_gpt.py --via
 * wsetrain). The validation losses agree within 2%.
 */
TEST_F_TIMEOUT(pytorch, gpt_bf16_micro_batches, 900)
{
	const char *p;
	double torch_val, wse_val;
	int st;

	if (access(FORTUNES, R_OK))
		SKIP(return, "no %s (tools/install-deps installs fortunes-min)", FORTUNES);
	if (system("/usr/bin/python3 -c 'import torch, onnx' >/dev/null 2>&1"))
		SKIP(return, "no python3 with torch and onnx in the guest (tools/wsevm --host-usr, tools/install-deps)");
	st = guest_run(self->out, OUT_MAX,
		       "/usr/bin/python3 models/compare_gpt.py --via wsetrain --devices %u --blocks 2 --width 32 --heads 2 --context 16 --batch 8 --micro-batch 2 --precision bf16 --lr 0.003 --steps 40 --warmup 4 --report 10 --text " FORTUNES,
		       self->dev.index);
	TH_LOG("%s", self->out);
	ASSERT_EQ(0, st);
	p = strstr(self->out, "final validation loss: pytorch ");
	ASSERT_NE(NULL, p);
	torch_val = atof(p + strlen("final validation loss: pytorch "));
	p = strstr(p, ", wse ");
	ASSERT_NE(NULL, p);
	wse_val = atof(p + strlen(", wse "));
	/* Trained: well below ln(96) = 4.56 of no knowledge. */
	EXPECT_LT(torch_val, 4.0);
	EXPECT_GT(wse_val, 0.0);
	EXPECT_LT(fabs(wse_val - torch_val) / torch_val, 0.02)
		TH_LOG("validation loss: PyTorch %.4f, wse %.4f", torch_val, wse_val);
}

TEST_HARNESS_MAIN
