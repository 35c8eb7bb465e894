# lib/metrics: libwsemetrics, TensorBoard event files (wse/tfevents.h).
# The events are protobuf-c messages of lib/metrics/tfevent.proto (compiled
# into build/gen); the TFRecord framing uses the shared CRC32C. Programs
# that link it add $(PROTOBUF_C_LIBS).
$(eval $(call protobuf_c,lib/metrics/tfevent.proto))
libs += wsemetrics
wsemetrics_srcs := lib/metrics/tfrecord.c lib/metrics/tfevents.c \
	$(B)/gen/tfevent.pb-c.c

# The C test reads the files back with the generated unpacker, and, when
# Debian's python3-protobuf is installed, through tests/host/tfevents_check.py
# with the schema's descriptor set (build/gen/tfevent.desc) as well.
host_tests += tfevents_test
tfevents_test_srcs := tests/host/tfevents_test.c
tfevents_test_libs := wsemetrics
tfevents_test_ldlibs := $(PROTOBUF_C_LIBS)
