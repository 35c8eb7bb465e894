#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# models/wse_checkpoint.py against PyTorch (tests/host/wse_checkpoint_test.py).
# make check's CI does not install python3-torch: then this is skipped, and
# the export round trip is onnx_export_test's, which needs no PyTorch.
. "$(dirname "$0")/tap.sh.inc"

if ! /usr/bin/python3 -c 'import torch, onnx' 2>/dev/null; then
	t_skip "wse_checkpoint.py" "skipped: no torch (python3-torch and python3-onnx are not installed)"
	t_done
fi
out=$(timeout 300 /usr/bin/python3 tests/host/wse_checkpoint_test.py 2>&1)
status=$?
while IFS= read -r line; do
	case $line in
	"ok "*) t_ok "${line#ok }" ;;
	"not ok "*) t_not_ok "${line#not ok }" ;;
	"#"*) echo "$line" ;;
	esac
done <<<"$out"
[ "$status" = 0 ] || t_not_ok "wse_checkpoint_test.py exited $status" "$(printf '%s\n' "$out" | tail -n 20)"
t_done
