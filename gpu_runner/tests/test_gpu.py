"""The GPU path on a real GPU (skipped cleanly without one): for one question, the
reference reaches its threshold and agrees with do_bench, the slow example is too slow,
and the wrong ones fail. ``python -m gpu_runner.device_check`` runs every question."""

import pytest

from gpu_runner.devices import local_gpu_name


def _cuda_ready() -> str:
    if local_gpu_name() is None:
        return "no NVIDIA GPU on this machine"
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    return "" if torch.cuda.is_available() else "this torch has no CUDA"


REASON = _cuda_ready()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(bool(REASON), reason=f"needs a GPU: {REASON}")]


def test_the_softmax_question_behaves_on_this_gpu(capsys):
    from gpu_runner.device_check import main

    assert main(["--only", "looped-softmax-vocab"]) == 0, capsys.readouterr().out
