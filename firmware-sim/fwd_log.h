/* SPDX-License-Identifier: GPL-2.0-only */
/* wsefwd logging: levelled, timestamped lines on stderr. */
#ifndef FWD_LOG_H
#define FWD_LOG_H

enum fwd_log_level {
	FWD_LOG_ERROR,
	FWD_LOG_WARN,
	FWD_LOG_INFO,
	FWD_LOG_DEBUG,
};

/* Parses "error", "warn", "info" or "debug"; -1 if none of those. */
int fwd_log_parse_level(const char *name);
void fwd_log_set_level(enum fwd_log_level level);
/* The program name each line carries (default "wsefwd"); @name must stay valid. */
void fwd_log_set_name(const char *name);
int fwd_log_enabled(enum fwd_log_level level);
void fwd_log(enum fwd_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define fwd_err(...)	fwd_log(FWD_LOG_ERROR, __VA_ARGS__)
#define fwd_warn(...)	fwd_log(FWD_LOG_WARN, __VA_ARGS__)
#define fwd_info(...)	fwd_log(FWD_LOG_INFO, __VA_ARGS__)
#define fwd_dbg(...)	fwd_log(FWD_LOG_DEBUG, __VA_ARGS__)

#endif /* FWD_LOG_H */
