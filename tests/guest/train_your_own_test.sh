#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Documentation/train-your-own.rst, every command of it, in the guest
# through the driver (tests/guest/train_your_own_test.py): needs the host's
# Python, PyTorch and ONNX, which tools/wsevm --host-usr shares. Without
# them it is one skip.
here=$(dirname "$0")
if ! /usr/bin/python3 -c 'import torch, onnx, numpy' >/dev/null 2>&1; then
	echo "ok 1 train_your_own_test # SKIP no python3 with torch and onnx in the guest (tools/wsevm --host-usr, tools/install-deps)"
	echo "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0"
	exit 0
fi
exec /usr/bin/python3 "$here/train_your_own_test.py" "$@"
