// SPDX-License-Identifier: GPL-2.0-only
/*
 * The wsectl program in the guest, against a firmware simulator it
 * attaches: JSON that is the same whichever place --json/-j takes on the
 * line and that a strict parser reads (device_id a string, exact above
 * 2^53), units in the text, stats -w rows and JSON lines, --version,
 * usage errors that name the unknown option, command or argument, and an
 * appliance's parts each in its own state.
 */
#include <json-c/json.h>

#include "kselftest_harness.h"
#include "wse_guest.h"

#define OUT_MAX		(64 << 10)
/* Above 2^53, so a double would round it. */
#define BIG_ID		"18446744073709551557"

FIXTURE(wsectl) {
	struct guest_peer fw;
	struct wse_ctl *ctl;
	struct wse_dev_status dev;
	char *out, *other;
};

FIXTURE_SETUP(wsectl)
{
	self->out = malloc(OUT_MAX);
	self->other = malloc(OUT_MAX);
	ASSERT_NE(NULL, self->out);
	ASSERT_NE(NULL, self->other);
	ASSERT_EQ(0, wse_ctl_open(&self->ctl));
	ASSERT_EQ(0, guest_peer_start(&self->fw, "wsefwd", "--wafer", "16x16", "--sram-per-pe",
				      "48K", "--clock-mhz", "850", "--device-id", BIG_ID,
				      "--log-level", "warn", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, self->fw.addr, 0, &self->dev));
}

FIXTURE_TEARDOWN(wsectl)
{
	wse_ctl_detach(self->ctl, self->dev.index);
	guest_peer_stop(&self->fw, SIGTERM);
	wse_ctl_close(self->ctl);
	free(self->out);
	free(self->other);
}

/* A strict parse of all of @text; NULL (and the reason logged) if it is not JSON. */
static struct json_object *parse_strict(struct __test_metadata *_metadata, const char *text)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *obj;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, text, (int)strlen(text));
	if (!obj || tok->char_offset < (int)strlen(text) - 1)
		TH_LOG("not one JSON document (%s) at %d: %s",
		       json_tokener_error_desc(json_tokener_get_error(tok)), (int)tok->char_offset,
		       text);
	json_tokener_free(tok);
	return obj;
}

/* The device of ours in the array `wsectl -j list` printed. */
static struct json_object *our_device(struct json_object *list, uint32_t index)
{
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		struct json_object *d = json_object_array_get_idx(list, i), *v;

		if (json_object_object_get_ex(d, "index", &v) &&
		    json_object_get_uint64(v) == index)
			return d;
	}
	return NULL;
}

TEST_F(wsectl, json_is_the_same_wherever_the_option_is)
{
	static const char *const forms[] = {
		"wsectl -j list", "wsectl list -j", "wsectl list --json", "wsectl --json list",
	};
	struct json_object *list, *d, *v;

	ASSERT_EQ(0, guest_run(self->out, OUT_MAX, "%s", forms[0])) TH_LOG("%s", self->out);
	for (size_t i = 1; i < sizeof(forms) / sizeof(forms[0]); i++) {
		ASSERT_EQ(0, guest_run(self->other, OUT_MAX, "%s", forms[i]))
			TH_LOG("%s", self->other);
		EXPECT_STREQ(self->out, self->other) TH_LOG("%s", forms[i]);
	}
	list = parse_strict(_metadata, self->out);
	ASSERT_NE(NULL, list);
	ASSERT_TRUE(json_object_is_type(list, json_type_array));
	d = our_device(list, self->dev.index);
	ASSERT_NE(NULL, d) TH_LOG("%s", self->out);
	ASSERT_TRUE(json_object_object_get_ex(d, "device_id", &v));
	EXPECT_TRUE(json_object_is_type(v, json_type_string));
	EXPECT_STREQ(BIG_ID, json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(d, "sram_per_pe", &v));
	EXPECT_EQ(48 * 1024, json_object_get_int64(v));
	ASSERT_TRUE(json_object_object_get_ex(d, "clock_khz", &v));
	EXPECT_EQ(850000, json_object_get_int64(v));
	json_object_put(list);

	/* info and stats: one object, stats with the counters. */
	ASSERT_EQ(0, guest_run(self->out, OUT_MAX, "wsectl stats %u -j", self->dev.index));
	d = parse_strict(_metadata, self->out);
	ASSERT_NE(NULL, d);
	EXPECT_TRUE(json_object_object_get_ex(d, "stats", &v));
	EXPECT_TRUE(json_object_object_get_ex(d, "device_id", &v));
	EXPECT_STREQ(BIG_ID, json_object_get_string(v));
	json_object_put(d);
}

TEST_F(wsectl, text_has_units)
{
	ASSERT_EQ(0, guest_run(self->out, OUT_MAX, "wsectl info %u", self->dev.index));
	EXPECT_NE(NULL, strstr(self->out, "48 KiB per PE, 12 MiB in total")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "clock         850 MHz")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "device id     " BIG_ID)) TH_LOG("%s", self->out);
	ASSERT_EQ(0, guest_run(self->out, OUT_MAX, "wsectl list"));
	EXPECT_NE(NULL, strstr(self->out, "12 MiB")) TH_LOG("%s", self->out);
}

TEST_F(wsectl, stats_watch)
{
	struct json_object *obj, *v;
	char *line, *save = NULL;
	int64_t t0 = guest_now_ms();
	int rows = 0;

	/* Three rows of rates, a fifth of a second apart, after the header. */
	ASSERT_EQ(0, guest_run(self->out, OUT_MAX, "wsectl stats %u -w 0.2 -c 3", self->dev.index))
		TH_LOG("%s", self->out);
	EXPECT_LE(600 - 100, guest_now_ms() - t0);
	EXPECT_NE(NULL, strstr(self->out, "FRM-TX/s")) TH_LOG("%s", self->out);
	for (line = strtok_r(self->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int hh, mm, ss;

		if (sscanf(line, "%d:%d:%d ", &hh, &mm, &ss) == 3) {
			EXPECT_NE(NULL, strstr(line, "B/s")) TH_LOG("%s", line);
			rows++;
		}
	}
	EXPECT_EQ(3, rows);

	/* JSON: one snapshot per line, each a document. */
	ASSERT_EQ(0, guest_run(self->out, OUT_MAX, "wsectl --json stats -w 0.1 %u --count 2",
			       self->dev.index)) TH_LOG("%s", self->out);
	rows = 0;
	save = NULL;
	for (line = strtok_r(self->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		obj = parse_strict(_metadata, line);
		ASSERT_NE(NULL, obj);
		EXPECT_TRUE(json_object_object_get_ex(obj, "stats", &v));
		EXPECT_TRUE(json_object_object_get_ex(obj, "time", &v));
		json_object_put(obj);
		rows++;
	}
	EXPECT_EQ(2, rows);
}

TEST_F(wsectl, usage_errors_name_what_was_wrong)
{
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsectl list --bogus"));
	EXPECT_NE(NULL, strstr(self->out, "unknown option '--bogus' for 'list'")) TH_LOG("%s", self->out);
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsectl -x list"));
	EXPECT_NE(NULL, strstr(self->out, "unknown option '-x'")) TH_LOG("%s", self->out);
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsectl lsit"));
	EXPECT_NE(NULL, strstr(self->out, "unknown command 'lsit'")) TH_LOG("%s", self->out);
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsectl info %u extra", self->dev.index));
	EXPECT_NE(NULL, strstr(self->out, "unexpected argument 'extra'")) TH_LOG("%s", self->out);
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsectl stats %u -w", self->dev.index));
	EXPECT_NE(NULL, strstr(self->out, "option '-w' needs a value")) TH_LOG("%s", self->out);
	EXPECT_EQ(2, guest_run(self->out, OUT_MAX, "wsectl stats %u -w 0", self->dev.index));
	EXPECT_NE(NULL, strstr(self->out, "--watch '0': outside")) TH_LOG("%s", self->out);
	/* A device that is not there is a failure, not a usage error. */
	EXPECT_EQ(1, guest_run(self->out, OUT_MAX, "wsectl info 60"));
	EXPECT_NE(NULL, strstr(self->out, "'wsectl list' shows the devices")) TH_LOG("%s", self->out);
}

TEST_F(wsectl, version_and_help)
{
	EXPECT_EQ(0, guest_run(self->out, OUT_MAX, "wsectl --version"));
	EXPECT_EQ(0, strncmp(self->out, "wsectl (wse) ", 13)) TH_LOG("%s", self->out);
	EXPECT_EQ(0, guest_run(self->out, OUT_MAX, "wsectl stats -V"));
	EXPECT_EQ(0, strncmp(self->out, "wsectl (wse) ", 13)) TH_LOG("%s", self->out);
	EXPECT_EQ(0, guest_run(self->out, OUT_MAX, "wsectl info -h"));
	EXPECT_NE(NULL, strstr(self->out, "usage: wsectl")) TH_LOG("%s", self->out);
}

/* The pid of appliance part @name in its run directory's parts file, or -1. */
static pid_t part_pid(const char *parts, const char *name)
{
	FILE *f = fopen(parts, "r");
	char line[128], what[64];
	int pid = -1, p;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %d", what, &p) == 2 && !strcmp(what, name))
			pid = p;
	if (f)
		fclose(f);
	return pid;
}

/* The appliance's parts as `wsectl info --json` shows them: each one's state and reason. */
struct parts {
	char system[2][8], reason[2][72];
	char memoryx[8], swarmx[8], input[8];
};

static int read_parts(struct __test_metadata *_metadata, char *out, uint32_t index,
		      struct parts *p)
{
	struct json_object *d, *a, *v, *sys;
	int ok;

	memset(p, 0, sizeof(*p));
	if (guest_run(out, OUT_MAX, "wsectl info %u --json", index))
		return -1;
	d = parse_strict(_metadata, out);
	if (!d)
		return -1;
	ok = json_object_object_get_ex(d, "appliance", &a) &&
	     json_object_object_get_ex(a, "system", &sys) &&
	     json_object_array_length(sys) == 2;
	for (size_t i = 0; ok && i < 2; i++) {
		struct json_object *s = json_object_array_get_idx(sys, i);

		ok = json_object_object_get_ex(s, "state", &v);
		if (ok)
			snprintf(p->system[i], sizeof(p->system[i]), "%s", json_object_get_string(v));
		ok = ok && json_object_object_get_ex(s, "reason", &v);
		if (ok)
			snprintf(p->reason[i], sizeof(p->reason[i]), "%s", json_object_get_string(v));
	}
	ok = ok && json_object_object_get_ex(a, "memoryx", &v) &&
	     json_object_object_get_ex(v, "state", &v);
	if (ok)
		snprintf(p->memoryx, sizeof(p->memoryx), "%s", json_object_get_string(v));
	ok = ok && json_object_object_get_ex(a, "swarmx", &v) &&
	     json_object_object_get_ex(v, "state", &v);
	if (ok)
		snprintf(p->swarmx, sizeof(p->swarmx), "%s", json_object_get_string(v));
	ok = ok && json_object_object_get_ex(a, "input", &v) &&
	     json_object_object_get_ex(v, "state", &v);
	if (ok)
		snprintf(p->input, sizeof(p->input), "%s", json_object_get_string(v));
	json_object_put(d);
	if (!ok)
		TH_LOG("no appliance parts in: %s", out);
	return ok ? 0 : -1;
}

/*
 * An appliance of two systems (in the guest): a system killed is down
 * with its reason while the other stays up; attached again (a new user
 * node) the system that answered is idle, as are MemoryX, SwarmX and the
 * input workers, and the killed one is still down: no job has connected
 * it since. The table says the same.
 */
TEST_F(wsectl, appliance_parts_each_show_their_state)
{
	struct guest_peer apl;
	struct wse_dev_status d;
	struct parts p;
	pid_t victim;

	ASSERT_EQ(0, guest_peer_start(&apl, "wse-appliance", "--systems", "2", "--run-dir",
				      "/tmp/apl-ctl", "--fw-arg=--wafer=16x16", "--log-level",
				      "warn", NULL));
	ASSERT_EQ(0, guest_attach(self->ctl, apl.addr, 0, &d));
	ASSERT_EQ(0, read_parts(_metadata, self->out, d.index, &p));
	EXPECT_STREQ("up", p.system[0]);
	EXPECT_STREQ("up", p.system[1]);
	EXPECT_STREQ("up", p.memoryx);

	victim = part_pid("/tmp/apl-ctl/parts", "system-1");
	ASSERT_LT(0, victim);
	kill(victim, SIGKILL);
	for (int i = 0; i < 100 && !strcmp(p.system[1], "up"); i++) {
		usleep(50000);
		ASSERT_EQ(0, read_parts(_metadata, self->out, d.index, &p));
	}
	EXPECT_STREQ("up", p.system[0]);
	EXPECT_STREQ("", p.reason[0]);
	EXPECT_STREQ("down", p.system[1]);
	EXPECT_STRNE("", p.reason[1]);
	ASSERT_EQ(0, guest_run(self->out, OUT_MAX, "wsectl info %u", d.index));
	EXPECT_NE(NULL, strstr(self->out, "up    unix:")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "down  unix:")) TH_LOG("%s", self->out);

	wse_ctl_detach(self->ctl, d.index);
	ASSERT_EQ(0, guest_attach(self->ctl, apl.addr, 0, &d));
	ASSERT_EQ(0, read_parts(_metadata, self->out, d.index, &p));
	EXPECT_STREQ("idle", p.system[0]);
	EXPECT_STREQ("", p.reason[0]);
	EXPECT_STREQ("down", p.system[1]);
	EXPECT_STRNE("", p.reason[1]);
	EXPECT_STREQ("idle", p.memoryx);
	EXPECT_STREQ("idle", p.swarmx);
	EXPECT_STREQ("idle", p.input);
	ASSERT_EQ(0, guest_run(self->out, OUT_MAX, "wsectl info %u", d.index));
	EXPECT_NE(NULL, strstr(self->out, "idle  unix:")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "MemoryX       idle")) TH_LOG("%s", self->out);

	wse_ctl_detach(self->ctl, d.index);
	guest_peer_stop(&apl, SIGTERM);
}

TEST_HARNESS_MAIN
