// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsetrain: train a model on an IDX dataset on wse devices, layer-pipelined
 * or by weight streaming over N systems, with checkpoints and metrics.
 * Documentation/wsetrain.rst.
 */
#include <stdio.h>

#include "train.h"
#include "wse/filekind.h"

int main(int argc, char **argv)
{
	struct train_opts o;
	int ret = train_parse(argc, argv, &o);

	if (ret < 0)
		fputs("Try 'wsetrain --help' for more information.\n", stderr);
	if (ret)
		return ret > 0 ? 0 : EXIT_USAGE;
	if (o.inspect)
		return wse_file_expect("wsetrain", o.inspect, WSE_FILE_BIT(WSE_FILE_CHECKPOINT),
				       "a checkpoint") ||
		       train_checkpoint_inspect(o.inspect) ? EXIT_TRAIN_FAILED : 0;
	if (o.export_ckpt)
		return train_export(&o) ? EXIT_TRAIN_FAILED : 0;
	if (o.pass_through)
		return train_pass_through(&o);
	if (o.sample)
		return train_sample(&o) ? EXIT_TRAIN_FAILED : 0;
	return train_run(&o);
}
