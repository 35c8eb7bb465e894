# SPDX-License-Identifier: GPL-2.0-only
"""wse_export: the export helper, now python/wse/export.py (the wse package);
kept under this name for the models/ scripts."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from wse.export import KEY, REMOVED_KEY, annotate, export  # noqa: E402,F401
