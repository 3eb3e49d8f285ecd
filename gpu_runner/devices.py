"""Which GPU this machine has, what the catalogue says it can do, and its queue name.

The host reads the GPU with ``nvidia-smi`` (a subprocess: the worker process itself never
initialises CUDA, so Celery's forked children stay safe) before and after each timed
run, and the readings go into the verdict: name, SM and memory clocks, temperature,
power. The catalogue key comes from the marketed name by an explicit table: a variant
with other memory or clocks (H100 PCIe, H200 NVL, A100 40GB) is deliberately NOT
matched, because judging it against another part's peak would be wrong; such a GPU
still grades correctness and reports raw times.

``python -m gpu_runner.devices`` prints the local GPU, its catalogue key and the Celery
queue its worker should consume (``--queue`` prints the queue alone).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from gpu_runner.timing import Peak

# Marketed names as nvidia-smi / torch report them -> catalogue key (questions/catalogue/gpus.yaml).
_CATALOGUE_NAMES = (
    (re.compile(r"^NVIDIA H100 80GB HBM3$|^NVIDIA H100 SXM5?\b"), "h100_sxm"),
    (re.compile(r"^NVIDIA H200$|^NVIDIA H200 SXM\b|^NVIDIA H200 141GB HBM3e$"), "h200"),
    (re.compile(r"^NVIDIA A100-SXM4-80GB$|^NVIDIA A100 SXM4 80GB$"), "a100_80gb"),
    (re.compile(r"^NVIDIA B200$"), "b200"),
    (re.compile(r"^NVIDIA L40S$"), "l40s"),
    (re.compile(r"^AMD Instinct MI300X\b"), "mi300x"),
)
# Queue names are short (settings: gpu.h100, gpu.h200, ...).
_QUEUE_NAMES = {"h100_sxm": "h100", "h200": "h200", "a100_80gb": "a100", "b200": "b200",
                "l40s": "l40s", "mi300x": "mi300x"}
_SMI_FIELDS = ("name", "clocks.sm", "clocks.mem", "clocks.max.sm", "temperature.gpu", "power.draw")
SMI_TIMEOUT_SECONDS = 10


def catalogue_key(device_name: str) -> str | None:
    """The catalogue key for a device name, or None when the catalogue has no such part."""
    name = " ".join(str(device_name).split())
    for pattern, key in _CATALOGUE_NAMES:
        if pattern.search(name):
            return key
    return None


def queue_name(device_name: str) -> str:
    """The Celery queue a worker on this GPU consumes: ``gpu.<short kind>``; an unknown
    part gets ``gpu.other`` (it still grades correctness and reports raw times)."""
    key = catalogue_key(device_name)
    return f"gpu.{_QUEUE_NAMES[key]}" if key else "gpu.other"


@dataclass(frozen=True)
class DeviceReading:
    """One nvidia-smi reading. Clocks in MHz, temperature in C, power in W; None when
    the tool did not report a field."""

    name: str
    sm_clock_mhz: float | None = None
    memory_clock_mhz: float | None = None
    max_sm_clock_mhz: float | None = None
    temperature_c: float | None = None
    power_w: float | None = None

    def to_json(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        parts = [self.name]
        if self.sm_clock_mhz is not None:
            peak = f"/{self.max_sm_clock_mhz:g}" if self.max_sm_clock_mhz else ""
            parts.append(f"SM {self.sm_clock_mhz:g}{peak} MHz")
        if self.memory_clock_mhz is not None:
            parts.append(f"memory {self.memory_clock_mhz:g} MHz")
        if self.temperature_c is not None:
            parts.append(f"{self.temperature_c:g} C")
        if self.power_w is not None:
            parts.append(f"{self.power_w:g} W")
        return ", ".join(parts)


def parse_smi_line(line: str) -> DeviceReading:
    """One line of ``nvidia-smi --query-gpu=<_SMI_FIELDS> --format=csv,noheader,nounits``."""
    cells = [cell.strip() for cell in line.split(",")]
    if len(cells) != len(_SMI_FIELDS) or not cells[0]:
        raise ValueError(f"unexpected nvidia-smi line: {line!r}")

    def number(text: str) -> float | None:
        try:
            return float(text)
        except ValueError:  # "[N/A]", "[Not Supported]"
            return None

    return DeviceReading(cells[0], *(number(cell) for cell in cells[1:]))


def read_device(index: int = 0) -> DeviceReading | None:
    """The GPU at ``index`` now, or None when this machine has no NVIDIA GPU to read."""
    tool = shutil.which("nvidia-smi")
    if tool is None:
        return None
    try:
        done = subprocess.run(
            [tool, f"--id={index}", f"--query-gpu={','.join(_SMI_FIELDS)}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=SMI_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        return None
    try:
        return parse_smi_line(lines[0])
    except ValueError:
        return None


@functools.cache
def local_gpu_name() -> str | None:
    """The name of this machine's first GPU (read once per process), or None."""
    reading = read_device()
    return reading.name if reading else None


def catalogue_peak(gpus: Mapping, key: str | None, flops_field: str = "fp16_dense") -> Peak | None:
    """The HBM bandwidth and ``flops_field`` peak of GPU ``key`` in bytes/s and FLOP/s,
    from ``gpus`` (the catalogue's ``gpus`` section, as a question's context holds it:
    the device side is handed the catalogue, it does not read the bank); None for an
    unknown key or a part without that peak."""
    entry = gpus.get(key) if key is not None else None
    if entry is None or flops_field not in entry:
        return None
    bandwidth = entry["hbm_bandwidth"].to("B/s").magnitude
    flops = entry[flops_field].to("FLOP/s").magnitude
    return Peak(bandwidth=float(bandwidth), flops=float(flops))


def catalogue_l2_bytes(gpus: Mapping, key: str | None) -> int:
    """GPU ``key``'s L2 size in bytes from ``gpus`` (0 when unknown: the flush then uses
    its floor)."""
    entry = gpus.get(key) if key is not None else None
    return int(entry["l2_cache"].to("B").magnitude) if entry and "l2_cache" in entry else 0


def main(argv: list[str]) -> int:
    name = local_gpu_name()
    if "--queue" in argv:
        if name is None:
            print("no GPU on this machine", file=sys.stderr)
            return 1
        print(queue_name(name))
        return 0
    if name is None:
        print("No NVIDIA GPU found (nvidia-smi is missing or reports none): kernel answers "
              "grade for correctness under Triton's interpreter.")
        return 0
    key = catalogue_key(name)
    print(f"GPU: {read_device().describe()}")
    print(f"catalogue key: {key or 'none (raw times only, speed not scored)'}")
    print(f"queue: {queue_name(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
