"""Kernel answers: correctness anywhere, speed on a GPU.

- ``problem``: what a kernel question's trusted judge provides (``KernelJudge``);
- ``harness``: runs inside the sandbox next to the candidate's code (one fresh process
  per run): the cases, under Triton's interpreter or on the GPU, and the timing loop;
- ``timing``: the timing method and its statistics (pure: stopping rule, physical floor,
  fraction of peak), shared by the harness and the host;
- ``runner``: the trusted side of one submission (``judge_kernel``); ``feedback`` turns
  its report into a verdict; ``validation`` checks a kernel part before candidates see it;
- ``devices``: the local GPU, its catalogue key, peaks and queue; ``process``: the
  sandboxed or (trusted code only) plain process a run gets; ``routing``: the Celery queue;
- ``device_check``: the whole GPU path over every kernel question, on one GPU.
The answer kind itself is ``grading.kinds.kernel``.
"""
