# tools/wsetrain: training on wse devices (Documentation/wsetrain.rst).
progs += wsetrain
wsetrain_srcs := $(addprefix tools/wsetrain/, wsetrain.c options.c program.c session.c job.c \
	batches.c steps.c weights.c schedule.c predict.c state.c \
	checkpoint.c saver.c rundir.c interrupt.c report.c eta.c metrics.c text.c sample.c export.c \
	params.c hparams.c placement.c)
wsetrain_libs := wse wsedata wsemetrics wsecompiler wsep wafer wseengine wselink wsecli wseparams
wsetrain_ldlibs = $(WSE_LDLIBS) $(PROTOBUF_C_LIBS) $(WSEPARAMS_LDLIBS) -lz -ljson-c -lopenblas -lm \
	-lpthread

# The ETA on made-up timelines.
host_tests += wsetrain_eta_test
wsetrain_eta_test_srcs := tests/host/wsetrain_eta_test.c tools/wsetrain/eta.c
wsetrain_eta_test_ldlibs := -lm

# What a run shows and records: lines, the bar, CSV and TensorBoard alike.
host_tests += wsetrain_report_test
wsetrain_report_test_srcs := tests/host/wsetrain_report_test.c tools/wsetrain/report.c \
	tools/wsetrain/metrics.c tools/wsetrain/eta.c tools/wsetrain/options.c tools/wsetrain/params.c
wsetrain_report_test_libs := wsemetrics wsep wseengine wseparams wsenum
wsetrain_report_test_ldlibs = $(PROTOBUF_C_LIBS) $(WSEPARAMS_LDLIBS) -lm

# The program's timing model and wafer map kept in a run directory, from
# programs build/bin/wsecc compiles (a layer and a graph program).
host_tests += wsetrain_placement_test
wsetrain_placement_test_srcs := tests/host/wsetrain_placement_test.c tools/wsetrain/placement.c \
	tools/wsetrain/options.c tools/wsetrain/params.c
wsetrain_placement_test_libs := wsecompiler wsep wafer wseengine wseparams wsenum
wsetrain_placement_test_ldlibs = $(PROTOBUF_C_LIBS) $(WSEPARAMS_LDLIBS) -ljson-c -lopenblas -lm
$(B)/host-tests/wsetrain_placement_test: | $(B)/bin/wsecc
$(B)/host-tests-san/wsetrain_placement_test: | $(B)/bin/wsecc

# --export: a checkpoint's weights back into the ONNX model, round trip
# through the importer (runs build/bin/wsetrain; needs no PyTorch).
host_tests += onnx_export_test
onnx_export_test_srcs := tests/host/onnx_export_test.c tools/wsetrain/checkpoint.c \
	tools/wsetrain/options.c tools/wsetrain/params.c
onnx_export_test_libs := wsecompiler wsep wafer wseengine wseparams wsenum
onnx_export_test_ldlibs = $(PROTOBUF_C_LIBS) $(WSEPARAMS_LDLIBS) -lopenblas -lm
$(B)/host-tests/onnx_export_test: | $(B)/bin/wsetrain
$(B)/host-tests-san/onnx_export_test: | $(B)/bin/wsetrain
# models/wse_checkpoint.py against PyTorch; skipped where python3-torch is not.
host_scripts += wse_checkpoint_test
