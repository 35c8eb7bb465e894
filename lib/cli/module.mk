# lib/cli: libwsecli, what the tools share on their command line: what a
# file is by its magic and what to do with it (wse/filekind.h), and the one
# style of usage error (wse/usage.h).
libs += wsecli
wsecli_srcs := lib/cli/filekind.c lib/cli/usage.c lib/cli/opt_number.c

# Every tool: an unknown option (one line, exit 2), a foreign file where a
# model or program is expected, and wsetrain's checks before its run directory.
host_tests += tool_errors_test
tool_errors_test_srcs := tests/host/tool_errors_test.c
$(B)/host-tests/tool_errors_test $(B)/host-tests-san/tool_errors_test: | $(B)/bin/wsecc $(B)/bin/wsetrain $(B)/bin/wsectl $(B)/bin/wsereport $(B)/bin/wsefwd $(B)/bin/wse-appliance $(B)/bin/wsebench

# The sniffer on the corpus and on each magic.
host_tests += filekind_test
filekind_test_srcs := tests/host/filekind_test.c
filekind_test_libs := wsecli
