"""Which Celery queue grades an attempt: kernel answers go to the GPU pool when settings
name one (``GPU_QUEUE``), everything else to the CPU graders' queue."""

from __future__ import annotations

GPU_KINDS = frozenset({"kernel"})


def queue_for(part_kind: str) -> str:
    """The queue for an attempt at a part of ``part_kind``: ``settings.GPU_QUEUE`` for
    kernel parts when it is set, else ``settings.GRADING_QUEUE`` (where a kernel grades
    under Triton's interpreter, speed unmeasured)."""
    from django.conf import settings

    gpu_queue = getattr(settings, "GPU_QUEUE", "")
    if part_kind in GPU_KINDS and gpu_queue:
        return gpu_queue
    return settings.GRADING_QUEUE
