"""Kernel attempts go to the GPU pool only when settings name one."""

from gpu_runner.routing import queue_for


def test_without_a_gpu_pool_everything_grades_on_the_cpu_queue(settings):
    settings.GPU_QUEUE = ""
    assert queue_for("kernel") == settings.GRADING_QUEUE == "grading"
    assert queue_for("numeric") == "grading"


def test_with_a_gpu_pool_only_kernels_go_there(settings):
    settings.GPU_QUEUE = "gpu.h100"
    assert queue_for("kernel") == "gpu.h100"
    assert queue_for("code") == "grading"
