"""The device side of kernel answers: the GPU, timing on it, and the process a run gets.

- ``harness``: runs inside the sandbox next to the candidate's code (one fresh process
  per run): the cases, under Triton's interpreter or on the GPU, and the timing loop;
- ``timing``: the timing method and its statistics (pure: stopping rule, physical floor,
  fraction of peak), shared by the harness and the host;
- ``devices``: the local GPU, its catalogue key, peaks and queue; ``process``: the
  sandboxed or (trusted code only) plain process a run gets; ``routing``: the Celery queue;
- ``device_check``: the whole GPU path over every kernel question, on one GPU (a
  command-line tool: the one module here that uses the kernel kind).

What judges a kernel (the judge file's ``KernelJudge``, one submission's trip, its
verdict and a part's validation) is the answer kind's: ``grading.kinds.kernel``, which
uses this package; nothing else here imports it.
"""
