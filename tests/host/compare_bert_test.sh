#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# BERT by masked LM on the device against PyTorch: models/compare_bert.py
# --via device trains a small models/bert_mlm.py (1 layer, width 32,
# context 32) in PyTorch and, from the same exported weights on the same
# corrupted batches, on wsefwd fed by wse-trainhost (the tokens and the
# padding mask the program's two inputs). Every reported training loss
# and the validation loss must agree to 1e-3 relative. Skipped without
# python3-torch and python3-onnx or the fortunes.
. "$(dirname "$0")/tap.sh.inc"

if ! /usr/bin/python3 -c 'import torch, onnx' 2>/dev/null; then
	t_skip "compare_bert.py --via device" "skipped: no torch (python3-torch and python3-onnx are not installed)"
	t_done
fi
if [ ! -r /usr/share/games/fortunes/fortunes ]; then
	t_skip "compare_bert.py --via device" "skipped: no fortunes (tools/install-deps installs fortunes-min)"
	t_done
fi
out=$(timeout 300 /usr/bin/python3 models/compare_bert.py --via device --steps 40 --report 10 \
	--batch 8 --layers 1 --width 32 --heads 2 --context 32 --lr 0.01 --warmup 5 \
	--text /usr/share/games/fortunes/fortunes 2>&1)
status=$?
echo "$out" | sed 's/^/# /'
if [ "$status" != 0 ]; then
	t_not_ok "compare_bert.py --via device runs" "exited $status"
	t_done
fi
# "  step  pytorch train  wse train" rows, then "final validation loss: pytorch P (..), wse W (..)".
bad=$(echo "$out" | awk '/^ +[0-9]+ +[0-9.]+ +[0-9.]+$/ {
	d = $2 - $3; if (d < 0) d = -d; if (d > 1e-3 * $2) print "step " $1 ": " $2 " vs " $3 }')
if [ -z "$bad" ] && [ "$(echo "$out" | grep -cE '^ +[0-9]+ +[0-9.]+ +[0-9.]+$')" = 4 ]; then
	t_ok "the device's 4 reported training losses are PyTorch's to 1e-3"
else
	t_not_ok "the device's 4 reported training losses are PyTorch's to 1e-3" "$bad"
fi
val=$(echo "$out" | sed -n 's/^final validation loss: pytorch \([0-9.]*\) .*, wse \([0-9.]*\) .*/\1 \2/p')
if [ -n "$val" ] && echo "$val" | awk '{ d = $1 - $2; if (d < 0) d = -d; exit !(d <= 1e-3 * $1) }'; then
	t_ok "validation loss over the predicted positions: PyTorch's to 1e-3 ($val)"
else
	t_not_ok "validation loss over the predicted positions: PyTorch's to 1e-3" "got '$val'"
fi
t_done
