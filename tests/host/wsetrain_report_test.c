// SPDX-License-Identifier: GPL-2.0-only
/*
 * What wsetrain shows and records of a run (tools/wsetrain/report.c and
 * metrics.c), driven as schedule.c drives them through two epochs: plain
 * lines with Rate= and GlobalRate=, or a bar redrawn in place with a line
 * at each epoch's end; and a CSV and a TensorBoard file that hold the same
 * numbers, as tests/host/tb_vs_csv.py reads them through the real
 * event.proto schema (and a CSV changed by one float is caught); the
 * learning rate of each report's step in the CSV's lr column, as the
 * program's warm-up and cosine schedule gives it.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "../../tools/wsetrain/train.h"
#include "test_files.h"
#include "wse/engine.h"

#define TB_VS_CSV	"tests/host/tb_vs_csv.py"


FIXTURE(report) {
	char dir[64], csv[128], out[128];
	struct train_opts o;
	struct wsep_program p;
	struct train_job j;
};

FIXTURE_SETUP(report)
{
	strcpy(self->dir, "/tmp/wsetrain_report_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->csv, sizeof(self->csv), "%s/metrics.csv", self->dir);
	snprintf(self->out, sizeof(self->out), "%s/stdout", self->dir);
	self->o = (struct train_opts){ .csv = self->csv, .tensorboard = self->dir, .epochs = 2,
				       .report = 10, .progress = TRAIN_PROGRESS_LINES,
				       .expect_accuracy = -1 };
	snprintf(self->p.model_name, sizeof(self->p.model_name), "fc-mnist");
	self->p.mode = WSEP_MODE_PIPELINED;
	self->p.opt = (struct wsep_optimizer){ .kind = WSEP_OPT_SGD, .lr = 0.05,
					       .schedule = WSEP_LR_WARMUP_COSINE, .warmup = 30,
					       .total_steps = 200, .min_lr = 0.001 };
	self->j.o = &self->o;
	self->j.p = &self->p;
	self->j.n = 1;
	self->j.batch = 128;
	self->j.used = 12800;
	self->j.test.count = 2000;
	snprintf(self->j.sys[0].name, sizeof(self->j.sys[0].name), "device 0");
}

FIXTURE_TEARDOWN(report)
{
	if (test_remove_dir(self->dir))
		TH_LOG("could not remove %s", self->dir);
}

/* Two epochs of 100 steps in chunks of 10, an evaluation after each; stdout to @out. */
static int drive(struct train_job *j, const char *out)
{
	struct train_progress at = { 0 };
	struct train_step_times times = { .trained = 25600 };
	struct train_final fin;
	struct train_report *r;
	int saved = dup(STDOUT_FILENO), fd, ret;

	fflush(stdout);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || saved < 0 || dup2(fd, STDOUT_FILENO) < 0)
		return -1;
	close(fd);
	ret = train_report_open(j, &r);
	if (!ret) {
		train_report_start(r, 200, 100, 2, 2000);
		for (at.epoch = 0; at.epoch < 2; at.epoch++) {
			for (int c = 0; c < 10; c++) {
				struct train_tally t = { .loss = 1280 * (1.0 / (at.step + 3)),
							 .right = 600 + at.step * 3 };

				usleep(2000);
				at.step += 10;
				train_report_add(r, &at, &t, 1280);
				train_report_progress(r, &at);
			}
			{
				struct train_tally t = { .loss = 2000 * 0.4 / (at.epoch + 1),
							 .right = 1500 + 100 * at.epoch };

				train_report_test(r, &at, &t, 2000, 0.01);
			}
		}
		train_report_summary(r, &at, &times, &fin);
		ret = train_report_close(r);
	}
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	return ret;
}

static int count(const char *s, const char *what)
{
	int n = 0;

	while (s && (s = strstr(s, what))) {
		n++;
		s++;
	}
	return n;
}

/* tb_vs_csv.py on @dir: its exit status (77: protobuf missing). */
static int tb_vs_csv(const char *dir)
{
	char cmd[512];
	int st;

	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 " TB_VS_CSV " %s", dir);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST_F(report, lines_with_rates_and_the_same_numbers_in_csv_and_tensorboard)
{
	char cmd[1024], *out;
	int st;

	ASSERT_EQ(0, access(TB_VS_CSV, R_OK)) TH_LOG("run from the repository root");
	ASSERT_EQ(0, drive(&self->j, self->out));
	out = test_read_file(self->out, NULL);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(20, count(out, "| Train Epoch="));
	EXPECT_EQ(20, count(out, ", Rate="));
	EXPECT_EQ(20, count(out, ", GlobalRate="));
	EXPECT_EQ(2, count(out, "| Eval Epoch="));
	EXPECT_EQ(0, count(out, "\r"));
	EXPECT_NE(NULL, strstr(out, "summary: fc-mnist, pipelined on 1 system"));
	free(out);

	st = tb_vs_csv(self->dir);
	if (st == 77)
		SKIP(return, "python3-protobuf is missing (tools/install-deps)");
	EXPECT_EQ(0, st);
	/* One loss changed by a millionth: no longer the same float. */
	snprintf(cmd, sizeof(cmd),
		 "awk -F, -v OFS=, 'NR == 2 { $4 = sprintf(\"%%.9g\", $4 * 1.000001) } { print }' %s >%s.new && mv %s.new %s",
		 self->csv, self->csv, self->csv, self->csv);
	ASSERT_EQ(0, system(cmd));
	EXPECT_EQ(1, tb_vs_csv(self->dir));
}

/* Each training row's lr: the schedule at its step, as TensorBoard's float; none for evaluations. */
TEST_F(report, the_learning_rate_of_each_reported_step)
{
	const struct engine_lr_schedule s = { .kind = ENGINE_LR_WARMUP_COSINE, .warmup = 30,
					      .total = 200, .min_lr = 0.001 };
	char *csv, *line, *save = NULL;
	int train = 0, test = 0;

	ASSERT_EQ(0, drive(&self->j, self->out));
	csv = test_read_file(self->csv, NULL);
	ASSERT_NE(NULL, csv);
	line = strtok_r(csv, "\n", &save);
	ASSERT_NE(NULL, line);
	EXPECT_STREQ("kind,step,epoch,loss,accuracy,samples_per_s,global_samples_per_s,eta_s,wall_s,lr",
		     line);
	while ((line = strtok_r(NULL, "\n", &save))) {
		const char *last = strrchr(line, ',');
		unsigned long long step;

		ASSERT_NE(NULL, last);
		ASSERT_EQ(1, sscanf(line + 6, "%llu", &step)) TH_LOG("%s", line);
		if (!strncmp(line, "test,", 5)) {
			EXPECT_STREQ(",", last) TH_LOG("an evaluation has no lr: %s", line);
			test++;
			continue;
		}
		EXPECT_EQ((float)engine_lr_at(&s, 0.05, step), strtof(last + 1, NULL))
			TH_LOG("%s", line);
		train++;
	}
	EXPECT_EQ(20, train);
	EXPECT_EQ(2, test);
	/* The warm-up climbs, the cosine falls: step 10 below step 30, step 200 at the floor. */
	EXPECT_LT(engine_lr_at(&s, 0.05, 10), engine_lr_at(&s, 0.05, 30));
	EXPECT_LT(fabs(engine_lr_at(&s, 0.05, 200) - 0.001), 1e-9);
	free(csv);
}

TEST_F(report, a_bar_in_place_and_a_line_at_each_epoch_end)
{
	char *out;

	self->o.progress = TRAIN_PROGRESS_BAR;
	ASSERT_EQ(0, drive(&self->j, self->out));
	out = test_read_file(self->out, NULL);
	ASSERT_NE(NULL, out);
	/* Redrawn after every chunk, cleared for every line of its own. */
	EXPECT_EQ(20, count(out, "\repoch "));
	EXPECT_LE(20, count(out, "\033[K"));
	EXPECT_NE(NULL, strstr(out, "ETA "));
	EXPECT_EQ(2, count(out, "| Train Epoch="));
	EXPECT_EQ(2, count(out, "| Eval Epoch="));
	/* No line starts behind the bar. */
	EXPECT_EQ(0, count(out, "ETA ?\n"));
	free(out);
}

TEST_HARNESS_MAIN
