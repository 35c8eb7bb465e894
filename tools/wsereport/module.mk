# tools/wsereport: a run's curves (gnuplot) and HTML page (Documentation/wsereport.rst).
progs += wsereport
wsereport_srcs := tools/wsereport/wsereport.c tools/wsereport/metrics_csv.c \
	tools/wsereport/plot.c tools/wsereport/run_info.c tools/wsereport/html.c \
	tools/wsereport/compare.c tools/wsereport/timing.c
wsereport_libs := wseout wsecli wseengine wsenum
wsereport_ldlibs := -ljson-c -lm

# Runs build/bin/wsereport (and headless Chromium on its page).
host_tests += wsereport_test
wsereport_test_srcs := tests/host/wsereport_test.c
wsereport_test_ldlibs := -lpng16 -lm
$(B)/host-tests/wsereport_test $(B)/host-tests-san/wsereport_test: | $(B)/bin/wsereport $(B)/bin/wsecc

# After the guest tests: the run directories wsetrain made there, on the host.
post_tests += rundir_test
rundir_test_srcs := tests/host/rundir_test.c
rundir_test_ldlibs := -ljson-c -lpng16
$(B)/post-tests/rundir_test: | $(B)/bin/wsereport

# Nothing points the user at TensorBoard, which Debian does not package,
# except where it is installed.
host_scripts += tensorboard_hint_test
