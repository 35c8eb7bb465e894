# lib/outfile: libwseout, output files written safely (wse/outfile.h): a
# regular file replaced atomically, a device, FIFO or socket written
# through, never replaced. A leaf library: every program links it
# (leaf_libs in the top Makefile).
libs += wseout
wseout_srcs := lib/outfile/outfile.c

# The helper itself: every kind of path, FIFOs and sockets with a reader.
host_tests += outfile_test
outfile_test_srcs := tests/host/outfile_test.c
outfile_test_libs := wseout
outfile_test_ldlibs := -lpthread

# The tools' outputs through it: wsecc -o to /dev/null (in a scratch user and
# mount namespace), a FIFO, a directory, standard output; wsereport's page.
host_tests += outfile_cli_test
outfile_cli_test_srcs := tests/host/outfile_cli_test.c
outfile_cli_test_ldlibs := -lpthread
$(B)/host-tests/outfile_cli_test $(B)/host-tests-san/outfile_cli_test: | $(B)/bin/wsecc $(B)/bin/wsetrain $(B)/bin/wsereport

# wsetrain's outputs in the guest: a checkpoint into a FIFO, a device node
# and through a link, the CSV into a FIFO, a directory, --predict -o -.
guest_tests += wsetrain_outputs_test
wsetrain_outputs_test_srcs := tests/guest/wsetrain_outputs_test.c
wsetrain_outputs_test_libs := wse wselink
# '=': WSE_LDLIBS comes from lib/wse/module.mk, read after this one.
wsetrain_outputs_test_ldlibs = $(WSE_LDLIBS) -lpthread
