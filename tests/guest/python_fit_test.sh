#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The Python package in the guest, through the driver
# (tests/guest/python_fit_test.py): needs the host's Python and PyTorch,
# which tools/wsevm --host-usr shares. Without them it is one skip.
# Installed twice: python_fit_test runs its part "cnn", python_fit_gpt_test
# its part "gpt" (the example, and the GPT on the appliance), so that each
# stays within run-tests' 600 s with torch's import in the emulated guest.
here=$(dirname "$0")
name=${0##*/}
case $name in
python_fit_gpt_test) part=gpt ;;
*) part=cnn ;;
esac
if ! /usr/bin/python3 -c 'import torch, onnx, numpy' >/dev/null 2>&1; then
	echo "ok 1 $name # SKIP no python3 with torch and onnx in the guest (tools/wsevm --host-usr, tools/install-deps)"
	echo "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0"
	exit 0
fi
exec /usr/bin/python3 "$here/python_fit_test.py" "$part"
