"""Device names to catalogue keys and queues, nvidia-smi readings, catalogue peaks."""

import pytest

from gpu_runner import devices
from questions.catalogue import load_catalogue

GPUS = load_catalogue()["gpus"]


@pytest.mark.parametrize("name, key", [
    ("NVIDIA H100 80GB HBM3", "h100_sxm"),
    ("NVIDIA H200", "h200"),
    ("NVIDIA A100-SXM4-80GB", "a100_80gb"),
    ("NVIDIA B200", "b200"),
    ("NVIDIA L40S", "l40s"),
    ("AMD Instinct MI300X", "mi300x"),
])
def test_catalogued_parts_are_recognised(name, key):
    assert devices.catalogue_key(name) == key


@pytest.mark.parametrize("name", [
    "NVIDIA H100 PCIe",  # 2.0 TB/s, not the SXM part's 3.35
    "NVIDIA H100 NVL",
    "NVIDIA H200 NVL",
    "NVIDIA A100-SXM4-40GB",  # 1.56 TB/s
    "NVIDIA A100 80GB PCIe",
    "NVIDIA GeForce RTX 4090",
    "",
])
def test_variants_with_other_peaks_are_not_matched(name):
    assert devices.catalogue_key(name) is None


def test_queue_names_are_short_and_unknown_parts_get_their_own():
    assert devices.queue_name("NVIDIA H100 80GB HBM3") == "gpu.h100"
    assert devices.queue_name("NVIDIA H200") == "gpu.h200"
    assert devices.queue_name("NVIDIA GeForce RTX 4090") == "gpu.other"


def test_an_smi_line_is_read_and_unsupported_fields_are_none():
    reading = devices.parse_smi_line("NVIDIA H200, 1980, 3201, 1980, 41, [N/A]")
    assert reading == devices.DeviceReading("NVIDIA H200", 1980.0, 3201.0, 1980.0, 41.0, None)
    assert reading.describe() == "NVIDIA H200, SM 1980/1980 MHz, memory 3201 MHz, 41 C"
    with pytest.raises(ValueError):
        devices.parse_smi_line("NVIDIA H200, 1980")


def test_no_nvidia_smi_means_no_gpu(monkeypatch):
    monkeypatch.setattr(devices.shutil, "which", lambda _: None)
    assert devices.read_device() is None


def test_catalogue_peaks_are_in_bytes_and_flops_per_second():
    # The device side is handed the catalogue's GPU section, as a question's context holds it.
    peak = devices.catalogue_peak(GPUS, "h200", "fp16_dense")
    assert peak.bandwidth == pytest.approx(4.8e12)
    assert peak.flops == pytest.approx(989.4e12)
    assert devices.catalogue_peak(GPUS, None) is None
    assert devices.catalogue_peak(GPUS, "h200", "fp4_dense") is None  # a peak the part does not list
    assert devices.catalogue_l2_bytes(GPUS, "h100_sxm") == 50_000_000
    assert devices.catalogue_l2_bytes(GPUS, None) == 0
