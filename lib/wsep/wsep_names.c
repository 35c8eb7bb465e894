// SPDX-License-Identifier: LGPL-2.1-or-later
/* Printable names of the .wsep enumerations. */
#include "wse/wsep.h"

const char *wsep_mode_name(uint32_t mode)
{
	switch (mode) {
	case WSEP_MODE_PIPELINED: return "pipelined";
	case WSEP_MODE_WEIGHT_STREAMING: return "weight_streaming";
	}
	return "?";
}

const char *wsep_optimizer_name(uint32_t kind)
{
	switch (kind) {
	case WSEP_OPT_SGD: return "sgd";
	case WSEP_OPT_MOMENTUM: return "momentum";
	case WSEP_OPT_ADAM: return "adam";
	case WSEP_OPT_ADAMW: return "adamw";
	}
	return "?";
}

const char *wsep_elem_name(uint32_t elem)
{
	switch (elem) {
	case WSEP_ELEM_U8: return "u8";
	case WSEP_ELEM_I32: return "i32";
	case WSEP_ELEM_F32: return "f32";
	case WSEP_ELEM_I64: return "i64";
	}
	return "?";
}

const char *wsep_direction_name(uint32_t dir)
{
	switch (dir) {
	case WSEP_DIR_HOST_TO_DEVICE: return "host->device";
	case WSEP_DIR_DEVICE_TO_HOST: return "device->host";
	}
	return "?";
}

const char *wsep_limit_name(uint32_t limit)
{
	switch (limit) {
	case WSEP_LIMIT_COMPUTE: return "compute";
	case WSEP_LIMIT_FABRIC: return "fabric";
	case WSEP_LIMIT_HOST_IO: return "host I/O";
	case WSEP_LIMIT_WEIGHT_IO: return "weight I/O";
	case WSEP_LIMIT_SRAM_BW: return "SRAM bandwidth";
	}
	return "?";
}

const char *wsep_section_name(uint32_t type)
{
	switch (type) {
	case WSEP_SEC_WAFER: return "wafer";
	case WSEP_SEC_PROGRAM: return "program";
	case WSEP_SEC_LAYERS: return "layers";
	case WSEP_SEC_REGIONS: return "regions";
	case WSEP_SEC_STREAMS: return "streams";
	case WSEP_SEC_ESTIMATES: return "estimates";
	case WSEP_SEC_SUMMARY: return "summary";
	case WSEP_SEC_WEIGHTS: return "weights";
	case WSEP_SEC_GRAPH: return "graph";
	case WSEP_SEC_VALUES: return "values";
	case WSEP_SEC_NODES: return "nodes";
	case WSEP_SEC_CONSTANTS: return "constants";
	case WSEP_SEC_PARAM_NAMES: return "param_names";
	}
	return (type & WSEP_SEC_OPTIONAL_BIT) ? "optional, unknown" : "unknown";
}

const char *wsep_op_name(uint32_t op)
{
	static const char *const names[WSEP_OP_COUNT + 1] = {
		[WSEP_OP_CONV2D] = "conv2d", [WSEP_OP_MAXPOOL2D] = "maxpool2d",
		[WSEP_OP_AVGPOOL2D] = "avgpool2d", [WSEP_OP_GEMM] = "gemm",
		[WSEP_OP_MATMUL] = "matmul", [WSEP_OP_BINARY] = "binary",
		[WSEP_OP_ACT] = "activation", [WSEP_OP_LAYERNORM] = "layernorm",
		[WSEP_OP_SOFTMAX] = "softmax", [WSEP_OP_GATHER] = "gather",
		[WSEP_OP_ATTENTION] = "attention", [WSEP_OP_DROPOUT] = "dropout",
		[WSEP_OP_TRANSPOSE] = "transpose", [WSEP_OP_SPLIT] = "split",
		[WSEP_OP_RESHAPE] = "reshape", [WSEP_OP_BATCHNORM] = "batchnorm",
		[WSEP_OP_RMSNORM] = "rmsnorm", [WSEP_OP_ROTARY] = "rotary",
		[WSEP_OP_CONCAT] = "concat", [WSEP_OP_SLICE] = "slice", [WSEP_OP_WHERE] = "where",
	};

	return op >= 1 && op <= WSEP_OP_COUNT ? names[op] : "?";
}

const char *wsep_feature_name(uint32_t feature)
{
	switch (feature) {
	case WSEP_FEATURE_GRAPH: return "graph execution";
	case WSEP_FEATURE_TRAINING: return "AdamW, Nesterov, dampening or a learning-rate schedule";
	case WSEP_FEATURE_MICRO_BATCH: return "micro-batches";
	case WSEP_FEATURE_RECOMPUTE: return "recompute (activation checkpointing)";
	case WSEP_FEATURE_PRECISION: return "16-bit compute (fp16 or bf16)";
	case WSEP_FEATURE_INPUTS: return "several fed inputs";
	}
	return "an unknown feature";
}

const char *wsep_precision_name(uint32_t precision)
{
	switch (precision) {
	case WSEP_PRECISION_FP32: return "fp32";
	case WSEP_PRECISION_FP16: return "fp16";
	case WSEP_PRECISION_BF16: return "bf16";
	}
	return "unknown";
}
