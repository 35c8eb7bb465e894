# SPDX-License-Identifier: GPL-2.0-only
"""wse_checkpoint: wsetrain checkpoints back into PyTorch, now
python/wse/checkpoint.py (the wse package); kept under this name for the
models/ scripts."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from wse.checkpoint import (CKPT_HEADER, CKPT_MAGIC, NAME_RECORD, Tensor, crc32c,  # noqa: E402,F401
                            load_into, read, read_checkpoint, read_onnx)
