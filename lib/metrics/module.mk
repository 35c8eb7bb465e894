# lib/metrics: libwsemetrics, TensorBoard event files (wse/tfevents.h).
# libc only (and the shared CRC32C).
libs += wsemetrics
wsemetrics_srcs := lib/crc32c/crc32c.c lib/metrics/tfrecord.c lib/metrics/event_pb.c lib/metrics/tfevents.c

# The C test reads the files back itself and, when Debian's python3-protobuf
# is installed, through tests/host/tfevents_check.py as well.
host_tests += tfevents_test
tfevents_test_srcs := tests/host/tfevents_test.c
tfevents_test_libs := wsemetrics
