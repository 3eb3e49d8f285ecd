"""Which Celery queue grades an attempt: parts whose kind needs a GPU (``needs_gpu``) go to
the GPU pool when settings name one (``GPU_QUEUE``), everything else to the CPU graders'
queue."""

from __future__ import annotations

from django.conf import settings

import grading


def queue_for(part_kind: str) -> str:
    """The queue for an attempt at a part of ``part_kind``: ``settings.GPU_QUEUE`` for
    kinds that need a GPU when it is set, else ``settings.GRADING_QUEUE`` (where a kernel
    grades under Triton's interpreter, speed unmeasured). An unknown kind grades on the
    CPU queue, where the worker fails it."""
    gpu_queue = getattr(settings, "GPU_QUEUE", "")
    if gpu_queue and part_kind in grading.kinds_with("needs_gpu"):
        return gpu_queue
    return settings.GRADING_QUEUE
