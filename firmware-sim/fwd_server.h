/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The listener: accepts hosts one at a time, refuses a second with E_BUSY,
 * runs the poll loop, and turns SIGTERM/SIGINT into an orderly stop.
 */
#ifndef FWD_SERVER_H
#define FWD_SERVER_H

#include "fwd_device.h"

/*
 * Blocks SIGTERM/SIGINT and installs their handler: called before
 * fwd_server_listen() writes --port-file, so whoever read the port may stop
 * us at once and gets a clean stop (fwd_server_run() takes the signal).
 */
void fwd_server_catch_signals(void);
/* Opens the listening socket (and writes --port-file). Returns fd or -1. */
int fwd_server_listen(const struct fwd_config *cfg);
/* Serves until SIGTERM/SIGINT (or, with --once, the first host leaves).
 * Returns the process exit status.
 */
int fwd_server_run(struct fwd_device *dev, int listen_fd);

#endif /* FWD_SERVER_H */
