// SPDX-License-Identifier: GPL-2.0-only
/* wsefwd's command line. Every value is checked; errors say what to do. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wse/usage.h"
#include "wse_version.h"
#include "wse/engine.h"
#include "wse/numparse.h"
#include "fwd_config.h"
#include "fwd_log.h"
#include "fwd_version.h"
#include "fwd_wafer.h"
#include "wse/wsep.h"

#define DEFAULT_CLOCK_MHZ	850	/* Cerebras SDK scripts */
#define DEFAULT_QUEUES		4
#define DEFAULT_MAX_PAYLOAD	(4U << 20)
#define DEFAULT_HELLO_MS	10000
#define DEFAULT_SEND_MS		WSE_LINK_SEND_MS
#define MAX_QUEUES		64
#define DEFAULT_MAX_PROGRAM	(256ULL << 20)
#define MAX_THREADS		256

static void usage(FILE *out)
{
	fprintf(out,
"usage: wsefwd --listen tcp:HOST:PORT|unix:PATH [options]\n"
"\n"
"The wse firmware simulator: one process is one CS system. It serves one host\n"
"link at a time (a second host is refused with an E_BUSY error frame).\n"
"\n"
"  --listen ADDR          where to listen (required); tcp port 0 picks a free port\n"
"  --port-file FILE       write the TCP port chosen to FILE (for scripts)\n"
"  --wafer wse2|wse3|WxH  wafer geometry in PEs (default wse2: 750x994)\n"
"  --sram-per-pe BYTES    SRAM per PE, K/M/G suffixes allowed (default 48K)\n"
"  --device-id N          device id reported in HELLO (default: from pid and address)\n"
"  --clock-mhz N          modelled clock (default: the timing file's, %d)\n"
"  --queues N             hardware queues, 1..%d (default %d)\n"
"  --max-payload BYTES    largest frame payload accepted, %u..%u (default 4M)\n"
"  --hello-timeout-ms MS  drop a host that sends no HELLO in time (default %d)\n"
"  --threads N            OpenBLAS threads for the arithmetic (default 1: results\n"
"                         are bit-identical run after run at a given count)\n"
"  --micro-batches N      cut each batch into N micro-batches, 1..%d, which the\n"
"                         workers overlap on (default: up to %d, of at least %d\n"
"                         samples each)\n"
"  --workers N            threads that run a step's engine calls, 1..%d (default:\n"
"                         one per online CPU; results do not depend on it)\n"
"  --max-program BYTES    largest program image accepted (default 256M)\n"
"  --timing FILE          timing-model parameters (default: firmware-sim/timing/\n"
"                         wse2.params beside the build tree)\n"
"  --store DIR            storage shared with the hosts: snapshots of a program's\n"
"                         parameters are saved into files a host made there\n"
"  --log-level LEVEL      error, warn, info or debug (default info)\n"
"  --once                 exit after the first host disconnects\n"
"  --no-wire16            do not offer 16-bit weights on the wire (link capability\n"
"                         WIRE16), as firmware before it did\n"
"  --help, --version\n"
"\n"
"Fault knobs (for tests; frame counts are per connection, from 1):\n"
"  --fault-drop-after N       close the link on receiving frame N (0: at accept)\n"
"  --fault-delay-ms MS        delay every reply by MS\n"
"  --fault-corrupt-frame N    flip a bit in the Nth frame sent\n"
"  --fault-silent-after N     answer nothing after frame N, keep the link open\n"
"  --fault-malformed-after N  answer frames after the Nth with malformed frames\n"
"  --fault-malformed-kind K   which kind (default: cycle through all):\n"
"                             ",
		DEFAULT_CLOCK_MHZ, MAX_QUEUES, DEFAULT_QUEUES, WSE_LINK_PAYLOAD_MIN,
		WSE_LINK_PAYLOAD_LIMIT, DEFAULT_HELLO_MS, FWD_MICRO_BATCHES_MAX,
		FWD_MICRO_BATCHES_DEFAULT, FWD_MICRO_MIN_SAMPLES, FWD_WORKERS_MAX);
	for (int k = 0; k < WSE_LINK_MAL_COUNT; k++)
		fprintf(out, "%s%s", wse_link_malform_name(k),
			k + 1 < WSE_LINK_MAL_COUNT ? (k % 4 == 3 ? ",\n                             " : ", ") : "\n");
	fprintf(out,
"  --fault-seed N             seed for random choices in malformed frames\n"
"  --fault-stage-error K      pipeline stage K's forward pass fails on the last\n"
"                             micro-batch of every step\n"
"\n"
"SIGTERM or SIGINT: send SHUTDOWN to the host, close, exit 0.\n"
"See Documentation/wsefwd.rst and Documentation/link-protocol.rst.\n");
}

/* One worker per CPU the process may run on, within 1..FWD_WORKERS_MAX. */
static uint32_t default_workers(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > FWD_WORKERS_MAX ? FWD_WORKERS_MAX : (uint32_t)n;
}

/* A whole number 0..@max with an optional binary K, M, G or T. */
static int parse_size(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
	return wse_opt_u64("wsefwd", opt, s, 0, max, WSE_NUM_BINARY, out) ? -1 : 0;
}

/* A whole number 0..@max, decimal or 0x hex ("010" is ten). */
static int parse_num(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
	return wse_opt_u64("wsefwd", opt, s, 0, max, WSE_NUM_PLAIN, out) ? -1 : 0;
}

enum {
	OPT_LISTEN = 256, OPT_PORT_FILE, OPT_WAFER, OPT_SRAM, OPT_DEVICE_ID, OPT_CLOCK,
	OPT_QUEUES, OPT_MAX_PAYLOAD, OPT_HELLO_TIMEOUT, OPT_LOG_LEVEL, OPT_ONCE,
	OPT_HELP, OPT_VERSION, OPT_DROP, OPT_DELAY, OPT_CORRUPT, OPT_SILENT,
	OPT_MALFORMED, OPT_MALFORMED_KIND, OPT_SEED, OPT_THREADS, OPT_MAX_PROGRAM, OPT_TIMING,
	OPT_MICRO_BATCHES, OPT_STAGE_ERROR, OPT_WORKERS, OPT_STORE, OPT_NO_WIRE16,
};

static const struct option long_options[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "port-file", required_argument, NULL, OPT_PORT_FILE },
	{ "wafer", required_argument, NULL, OPT_WAFER },
	{ "sram-per-pe", required_argument, NULL, OPT_SRAM },
	{ "device-id", required_argument, NULL, OPT_DEVICE_ID },
	{ "clock-mhz", required_argument, NULL, OPT_CLOCK },
	{ "queues", required_argument, NULL, OPT_QUEUES },
	{ "max-payload", required_argument, NULL, OPT_MAX_PAYLOAD },
	{ "hello-timeout-ms", required_argument, NULL, OPT_HELLO_TIMEOUT },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "no-wire16", no_argument, NULL, OPT_NO_WIRE16 },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "fault-drop-after", required_argument, NULL, OPT_DROP },
	{ "fault-delay-ms", required_argument, NULL, OPT_DELAY },
	{ "fault-corrupt-frame", required_argument, NULL, OPT_CORRUPT },
	{ "fault-silent-after", required_argument, NULL, OPT_SILENT },
	{ "fault-malformed-after", required_argument, NULL, OPT_MALFORMED },
	{ "fault-malformed-kind", required_argument, NULL, OPT_MALFORMED_KIND },
	{ "fault-seed", required_argument, NULL, OPT_SEED },
	{ "fault-stage-error", required_argument, NULL, OPT_STAGE_ERROR },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "micro-batches", required_argument, NULL, OPT_MICRO_BATCHES },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "max-program", required_argument, NULL, OPT_MAX_PROGRAM },
	{ "timing", required_argument, NULL, OPT_TIMING },
	{ "store", required_argument, NULL, OPT_STORE },
	{ NULL, 0, NULL, 0 },
};

static int finish(struct fwd_config *cfg, const char *wafer_spec, uint64_t sram_per_pe,
		  bool sram_given)
{
	struct fwd_wafer w;
	char err[256];
	uint64_t pes;

	if (!cfg->listen_spec) {
		wse_usage_error("wsefwd", "--listen is required, e.g. --listen unix:/tmp/wse.sock or --listen tcp:127.0.0.1:0");
		return -1;
	}
	if (wse_link_addr_parse(cfg->listen_spec, &cfg->listen, err, sizeof(err))) {
		fprintf(stderr, "wsefwd: --listen %s\n", err);
		return -1;
	}
	if (cfg->port_file && cfg->listen.is_unix) {
		fprintf(stderr, "wsefwd: --port-file only makes sense with a tcp: address\n");
		return -1;
	}
	if (fwd_wafer_parse(wafer_spec, &w, err, sizeof(err))) {
		fprintf(stderr, "wsefwd: --wafer: %s\n", err);
		return -1;
	}
	cfg->wafer_spec = wafer_spec;
	cfg->wafer_width = w.width;
	cfg->wafer_height = w.height;
	cfg->sram_per_pe = sram_given ? sram_per_pe : w.sram_per_pe;
	if (!cfg->sram_per_pe) {
		fprintf(stderr, "wsefwd: --sram-per-pe must be at least 1 byte\n");
		return -1;
	}
	pes = (uint64_t)w.width * w.height;
	if (cfg->sram_per_pe > (1ULL << 50) / pes) {
		fprintf(stderr, "wsefwd: %ux%u PEs x %llu bytes is more device memory than wsefwd models (1 PiB)\n",
			w.width, w.height, (unsigned long long)cfg->sram_per_pe);
		return -1;
	}
	cfg->sram_total = pes * cfg->sram_per_pe;
	if (!cfg->device_id)
		cfg->device_id = ((uint64_t)wse_crc32c(0, cfg->listen_spec,
						       strlen(cfg->listen_spec)) << 32) |
				 (uint32_t)getpid();
	return 0;
}

int fwd_options_parse(int argc, char **argv, struct fwd_config *cfg)
{
	const char *wafer_spec = "wse2";
	uint64_t v, sram = 0;
	bool sram_given = false;
	int opt, level;

	memset(cfg, 0, sizeof(*cfg));
	cfg->clock_khz = DEFAULT_CLOCK_MHZ * 1000;
	cfg->num_queues = DEFAULT_QUEUES;
	cfg->max_payload = DEFAULT_MAX_PAYLOAD;
	cfg->hello_timeout_ms = DEFAULT_HELLO_MS;
	cfg->send_timeout_ms = DEFAULT_SEND_MS;
	cfg->log_level = FWD_LOG_INFO;
	cfg->threads = 1;
	cfg->workers = default_workers();
	cfg->max_program = DEFAULT_MAX_PROGRAM;
	cfg->fault.drop_after = -1;
	cfg->fault.silent_after = -1;
	cfg->fault.malformed_after = -1;
	cfg->fault.corrupt_frame = -1;
	cfg->fault.stage_error = -1;
	cfg->fault.malformed_kind = -1;
	cfg->fault.seed = 1;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hV", long_options, NULL)) != -1) {
		const char *name = optind > 1 ? argv[optind - 1] : "option";

		switch (opt) {
		case OPT_LISTEN:
			cfg->listen_spec = optarg;
			break;
		case OPT_PORT_FILE:
			cfg->port_file = optarg;
			break;
		case OPT_WAFER:
			wafer_spec = optarg;
			break;
		case OPT_SRAM:
			if (parse_size("--sram-per-pe", optarg, 1ULL << 40, &sram))
				return -1;
			sram_given = true;
			break;
		case OPT_DEVICE_ID:
			if (parse_num("--device-id", optarg, UINT64_MAX, &cfg->device_id))
				return -1;
			if (!cfg->device_id) {
				fprintf(stderr, "wsefwd: --device-id 0 is reserved; pick another id\n");
				return -1;
			}
			break;
		case OPT_CLOCK:
			if (parse_num("--clock-mhz", optarg, 4000000, &v))
				return -1;
			if (!v) {
				fprintf(stderr, "wsefwd: --clock-mhz must be at least 1\n");
				return -1;
			}
			cfg->clock_khz = (uint32_t)v * 1000;
			cfg->clock_given = true;
			break;
		case OPT_QUEUES:
			if (parse_num("--queues", optarg, MAX_QUEUES, &v))
				return -1;
			if (!v) {
				fprintf(stderr, "wsefwd: --queues must be 1..%d\n", MAX_QUEUES);
				return -1;
			}
			cfg->num_queues = (uint32_t)v;
			break;
		case OPT_MAX_PAYLOAD:
			if (parse_size("--max-payload", optarg, WSE_LINK_PAYLOAD_LIMIT, &v))
				return -1;
			if (v < WSE_LINK_PAYLOAD_MIN) {
				fprintf(stderr, "wsefwd: --max-payload must be at least %u\n",
					WSE_LINK_PAYLOAD_MIN);
				return -1;
			}
			cfg->max_payload = (uint32_t)v;
			break;
		case OPT_HELLO_TIMEOUT:
			if (parse_num("--hello-timeout-ms", optarg, 3600000, &v))
				return -1;
			cfg->hello_timeout_ms = (uint32_t)v;
			break;
		case OPT_LOG_LEVEL:
			level = fwd_log_parse_level(optarg);
			if (level < 0) {
				fprintf(stderr, "wsefwd: --log-level '%s': use error, warn, info or debug\n",
					optarg);
				return -1;
			}
			cfg->log_level = level;
			break;
		case OPT_ONCE:
			cfg->once = true;
			break;
		case OPT_NO_WIRE16:
			cfg->no_wire16 = true;
			break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			return 1;
		case 'V':
		case OPT_VERSION:
			/* The package's version, and the firmware's (HELLO). */
			printf("%sfirmware %s\n", WSE_VERSION_LINE("wsefwd"), FWD_VERSION);
			return 1;
		case OPT_DROP:
			if (parse_num("--fault-drop-after", optarg, INT64_MAX, &v))
				return -1;
			cfg->fault.drop_after = (int64_t)v;
			break;
		case OPT_DELAY:
			if (parse_num("--fault-delay-ms", optarg, 600000, &v))
				return -1;
			cfg->fault.delay_ms = (uint32_t)v;
			break;
		case OPT_CORRUPT:
			if (parse_num("--fault-corrupt-frame", optarg, INT64_MAX, &v))
				return -1;
			if (!v) {
				fprintf(stderr, "wsefwd: --fault-corrupt-frame counts from 1\n");
				return -1;
			}
			cfg->fault.corrupt_frame = (int64_t)v;
			break;
		case OPT_SILENT:
			if (parse_num("--fault-silent-after", optarg, INT64_MAX, &v))
				return -1;
			cfg->fault.silent_after = (int64_t)v;
			break;
		case OPT_MALFORMED:
			if (parse_num("--fault-malformed-after", optarg, INT64_MAX, &v))
				return -1;
			cfg->fault.malformed_after = (int64_t)v;
			break;
		case OPT_MALFORMED_KIND:
			cfg->fault.malformed_kind = wse_link_malform_parse(optarg);
			if (cfg->fault.malformed_kind < 0) {
				fprintf(stderr, "wsefwd: --fault-malformed-kind '%s' is not a kind; see --help for the list\n",
					optarg);
				return -1;
			}
			break;
		case OPT_THREADS:
			if (parse_num("--threads", optarg, MAX_THREADS, &v))
				return -1;
			if (!v) {
				fprintf(stderr, "wsefwd: --threads must be 1..%d\n", MAX_THREADS);
				return -1;
			}
			cfg->threads = (int)v;
			break;
		case OPT_STAGE_ERROR:
			if (parse_num("--fault-stage-error", optarg, ENGINE_MAX_LAYERS - 1, &v))
				return -1;
			cfg->fault.stage_error = (int64_t)v;
			break;
		case OPT_MICRO_BATCHES:
			if (parse_num("--micro-batches", optarg, FWD_MICRO_BATCHES_MAX, &v))
				return -1;
			if (!v) {
				fprintf(stderr, "wsefwd: --micro-batches must be 1..%d\n",
					FWD_MICRO_BATCHES_MAX);
				return -1;
			}
			cfg->micro_batches = (uint32_t)v;
			break;
		case OPT_WORKERS:
			if (parse_num("--workers", optarg, FWD_WORKERS_MAX, &v))
				return -1;
			if (!v) {
				fprintf(stderr, "wsefwd: --workers must be 1..%d\n", FWD_WORKERS_MAX);
				return -1;
			}
			cfg->workers = (uint32_t)v;
			break;
		case OPT_MAX_PROGRAM:
			if (parse_size("--max-program", optarg, 1ULL << 40, &cfg->max_program))
				return -1;
			if (cfg->max_program < WSEP_HEADER_SIZE) {
				fprintf(stderr, "wsefwd: --max-program must be at least %u bytes (a .wsep header)\n",
					WSEP_HEADER_SIZE);
				return -1;
			}
			break;
		case OPT_TIMING:
			cfg->timing_path = optarg;
			break;
		case OPT_STORE: {
			struct stat st;

			if (stat(optarg, &st) || !S_ISDIR(st.st_mode)) {
				fprintf(stderr, "wsefwd: --store %s: not a directory\n", optarg);
				return -1;
			}
			cfg->store = optarg;
			break;
		}
		case OPT_SEED:
			if (parse_num("--fault-seed", optarg, UINT64_MAX, &cfg->fault.seed))
				return -1;
			break;
		default:
			if (optopt)
				wse_usage_error("wsefwd", "%s needs a value, or is unknown", name);
			else
				wse_usage_error("wsefwd", "unknown option '%s'", name);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "wsefwd: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -1;
	}
	return finish(cfg, wafer_spec, sram, sram_given);
}
