// SPDX-License-Identifier: GPL-2.0-only
/*
 * wse-fakehost: the host side of the link in userspace, for manual checks
 * of a wsefwd (or any device) and for comparing with the kernel driver.
 * Connects, performs the handshake, prints the device's identity, does a
 * checked memory round trip, and shuts the link down.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wse/link_io.h"
#include "wse/link_addr.h"
#include "wse/link_client.h"
#include "wse/numparse.h"
#include "wse/usage.h"
#include "wse/splitmix64.h"

static void usage(FILE *out)
{
	fprintf(out,
"usage: wse-fakehost --connect tcp:HOST:PORT|unix:PATH [options]\n"
"\n"
"Connects to a wse device (e.g. wsefwd), performs the HELLO handshake, prints\n"
"the device information, writes SIZE bytes of seeded data at ADDR, reads them\n"
"back, compares, and sends SHUTDOWN.\n"
"\n"
"  --connect ADDR        device address (required)\n"
"  --size BYTES          round-trip size, K/M suffixes (default 1M; 0: none)\n"
"  --addr ADDR           device memory address (default 0)\n"
"  --queue N             queue for the memory requests (default 0)\n"
"  --chunk BYTES         bytes per request (default: the negotiated maximum)\n"
"  --version-min N, --version-max N   versions offered (default 1..1)\n"
"  --max-payload BYTES   largest payload accepted (default 4M)\n"
"  --keepalive-ms MS     interval announced in HELLO (default 0: none)\n"
"  --timeout-ms MS       per-request timeout (default 10000)\n"
"  --seed N              data pattern seed (default 1)\n"
"  --no-shutdown         close without SHUTDOWN\n"
"  --help\n"
"\n"
"Exit status: 0 success, 1 the device refused or misbehaved, 2 usage.\n");
}

/* Sizes and addresses take a binary K, M, G or T. */
static int parse_u64(const char *opt, const char *s, uint64_t *out)
{
	return wse_opt_u64("wse-fakehost", opt, s, 0, UINT64_MAX, WSE_NUM_BINARY, out) ? -1 : 0;
}

static void print_info(const struct wse_link_device_info *d)
{
	printf("device id:     0x%016llx\n", (unsigned long long)d->device_id);
	printf("firmware:      %s\n", d->fw_version);
	printf("protocol:      version %u (device speaks %u..%u)\n", d->version,
	       d->version_min, d->version_max);
	printf("capabilities:  0x%08x%s\n", d->caps, d->caps & WSE_LINK_CAP_MEM ? " (mem)" : "");
	printf("wafer:         %u x %u PEs\n", d->wafer_width, d->wafer_height);
	printf("sram per PE:   %llu bytes\n", (unsigned long long)d->sram_per_pe);
	printf("sram total:    %llu bytes\n", (unsigned long long)d->sram_total);
	printf("clock:         %u kHz\n", d->clock_khz);
	printf("queues:        %u\n", d->num_queues);
	printf("max payload:   %u bytes\n", d->max_payload);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "connect", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 's' },
		{ "addr", required_argument, NULL, 'a' },
		{ "queue", required_argument, NULL, 'q' },
		{ "chunk", required_argument, NULL, 'k' },
		{ "version-min", required_argument, NULL, 'v' },
		{ "version-max", required_argument, NULL, 'V' },
		{ "max-payload", required_argument, NULL, 'p' },
		{ "keepalive-ms", required_argument, NULL, 'K' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'S' },
		{ "no-shutdown", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct wse_link_hello_info hello = {
		.version_min = WSE_LINK_VERSION_MIN, .version_max = WSE_LINK_VERSION_MAX,
		.caps = WSE_LINK_CAP_MEM, .max_payload = 4U << 20,
	};
	uint64_t size = 1U << 20, addr = 0, queue = 0, chunk = 0, v, seed = 1, timeout = 10000;
	const char *connect_spec = NULL;
	bool do_shutdown = true;
	struct wse_link_client cl;
	struct wse_link_addr la;
	struct wse_link_err err;
	uint8_t *out = NULL, *in = NULL;
	char text[256], msg[256];
	uint32_t status;
	int opt, fd, ret = 1;
	int64_t t0, t1, t2;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': connect_spec = optarg; break;
		case 's': if (parse_u64("--size", optarg, &size)) return 2; break;
		case 'a': if (parse_u64("--addr", optarg, &addr)) return 2; break;
		case 'q':
			if (parse_u64("--queue", optarg, &queue) || queue > 0xffff)
				return 2;
			break;
		case 'k': if (parse_u64("--chunk", optarg, &chunk)) return 2; break;
		case 'v':
		case 'V':
			if (parse_u64(opt == 'v' ? "--version-min" : "--version-max", optarg, &v) ||
			    v > 0xffff)
				return 2;
			if (opt == 'v')
				hello.version_min = (uint16_t)v;
			else
				hello.version_max = (uint16_t)v;
			break;
		case 'p':
			if (parse_u64("--max-payload", optarg, &v) || v > UINT32_MAX)
				return 2;
			hello.max_payload = (uint32_t)v;
			break;
		case 'K':
			if (parse_u64("--keepalive-ms", optarg, &v) || v > UINT32_MAX)
				return 2;
			hello.keepalive_ms = (uint32_t)v;
			break;
		case 't':
			if (parse_u64("--timeout-ms", optarg, &timeout) || timeout > 3600000)
				return 2;
			break;
		case 'S': if (parse_u64("--seed", optarg, &seed)) return 2; break;
		case 'n': do_shutdown = false; break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "wse-fakehost: bad option (see --help)\n");
			return 2;
		}
	}
	if (!connect_spec || optind < argc) {
		fprintf(stderr, "wse-fakehost: give --connect ADDR and no other arguments (see --help)\n");
		return 2;
	}
	if (wse_link_addr_parse(connect_spec, &la, msg, sizeof(msg))) {
		fprintf(stderr, "wse-fakehost: --connect %s\n", msg);
		return 2;
	}
	fd = wse_link_connect(&la, (int)timeout, msg, sizeof(msg));
	if (fd < 0) {
		fprintf(stderr, "wse-fakehost: %s (is wsefwd running?)\n", msg);
		return 1;
	}
	ret = wse_link_client_hello(&cl, fd, &hello, (int)timeout, &status, text, sizeof(text), &err);
	if (ret) {
		fprintf(stderr, "wse-fakehost: handshake failed: %s\n", err.text);
		ret = 1;
		goto out;
	}
	if (status) {
		fprintf(stderr, "wse-fakehost: device refused HELLO with %s: %s\n",
			wse_link_status_name(status), text);
		ret = 1;
		goto out;
	}
	print_info(&cl.dev);
	ret = 1;
	if (size) {
		uint64_t max_chunk = cl.rules.max_payload - sizeof(struct wse_link_mem);
		uint64_t rng = seed;

		if (max_chunk > cl.rules.max_payload - sizeof(struct wse_link_status))
			max_chunk = cl.rules.max_payload - sizeof(struct wse_link_status);
		if (!chunk || chunk > max_chunk)
			chunk = max_chunk;
		out = malloc(size);
		in = malloc(size);
		if (!out || !in) {
			fprintf(stderr, "wse-fakehost: cannot allocate %llu bytes\n",
				(unsigned long long)size);
			goto out;
		}
		for (uint64_t i = 0; i < size; i += 8) {
			uint64_t r = wse_splitmix64(&rng);

			memcpy(out + i, &r, size - i < 8 ? size - i : 8);
		}
		t0 = wse_link_now_ms();
		for (uint64_t off = 0; off < size; off += chunk) {
			uint32_t n = (uint32_t)(size - off < chunk ? size - off : chunk);

			if (wse_link_client_mem_write(&cl, (uint16_t)queue, addr + off, out + off, n,
						      &status, text, sizeof(text), &err)) {
				fprintf(stderr, "wse-fakehost: MEM_WRITE: %s\n", err.text);
				goto out;
			}
			if (status) {
				fprintf(stderr, "wse-fakehost: MEM_WRITE refused with %s: %s\n",
					wse_link_status_name(status), text);
				goto out;
			}
		}
		t1 = wse_link_now_ms();
		for (uint64_t off = 0; off < size; off += chunk) {
			uint32_t n = (uint32_t)(size - off < chunk ? size - off : chunk);

			if (wse_link_client_mem_read(&cl, (uint16_t)queue, addr + off, in + off, n,
						     &status, text, sizeof(text), &err)) {
				fprintf(stderr, "wse-fakehost: MEM_READ: %s\n", err.text);
				goto out;
			}
			if (status) {
				fprintf(stderr, "wse-fakehost: MEM_READ refused with %s: %s\n",
					wse_link_status_name(status), text);
				goto out;
			}
		}
		t2 = wse_link_now_ms();
		if (memcmp(out, in, size)) {
			fprintf(stderr, "wse-fakehost: data read back differs from data written\n");
			goto out;
		}
		printf("round trip:    %llu bytes at 0x%llx in %llu-byte requests, crc32c 0x%08x, "
		       "write %lld ms, read %lld ms\n",
		       (unsigned long long)size, (unsigned long long)addr,
		       (unsigned long long)chunk, wse_crc32c(0, in, size),
		       (long long)(t1 - t0), (long long)(t2 - t1));
	}
	if (do_shutdown) {
		size_t rest;

		if (wse_link_client_call(&cl, WSE_LINK_OP_SHUTDOWN, 0, NULL, 0, &status, &rest, &err)) {
			fprintf(stderr, "wse-fakehost: SHUTDOWN: %s\n", err.text);
			goto out;
		}
		if (status) {
			fprintf(stderr, "wse-fakehost: SHUTDOWN answered %s\n",
				wse_link_status_name(status));
			goto out;
		}
		printf("shutdown:      acknowledged\n");
	}
	ret = 0;
out:
	free(out);
	free(in);
	wse_link_client_free(&cl);
	close(fd);
	return ret;
}
