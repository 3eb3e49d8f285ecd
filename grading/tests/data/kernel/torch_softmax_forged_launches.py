"""A candidate who answers with PyTorch, defines a Triton kernel only to pass the reading
check, and rewrites the harness's launch record (``_launches.json`` in the output
folder, ``{"value": {case id: launches}}``) as the process exits, to claim a launch for
every case. Correct, and must still be refused."""
import atexit
import json
import os
import sys

import torch
import triton


@triton.jit
def unused_kernel(x_ptr):
    pass


def _claim_launches():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "/sandbox/out"
    path = os.path.join(out_dir, "_launches.json")
    with open(path, encoding="utf-8") as handle:
        counts = json.load(handle)["value"]
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"value": {case: 1 for case in counts}}, handle)


atexit.register(_claim_launches)


def softmax(logits: torch.Tensor) -> torch.Tensor:
    return torch.softmax(logits, dim=-1)
