"""Load the catalogue of facts (GPUs, models, dtypes, links) that questions compute from.

`load_catalogue()` returns `{section: {key: {field: value}}}` with every string that
starts with a digit turned into a pint Quantity (`"3.35 TB/s"`), and checks each entry
against `SCHEMA`: required fields are present and every known field has the dimension
its unit implies. Any problem raises `CatalogueError` naming the file, key and field,
because a wrong fact here silently skews every question that uses it.

Pure Python (no Django), so the validator and the grading engine can use it anywhere.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import yaml

from grading.quantities import parse_quantity

CATALOGUE_DIR = Path(__file__).resolve().parent / "catalogue"

# Fields that are prose even when they start with a digit ("400G Ethernet").
TEXT_FIELDS = frozenset({"name", "source"})

KEY_PATTERN = re.compile(r"[a-z0-9_]+")

# A field's expected unit (its dimension is what is checked) or COUNT for a plain number.
COUNT = None

# The contract with question authors (questions/FORMAT.md, last section). Entries may
# carry more fields than listed; a listed field must have this dimension when present.
SCHEMA: dict[str, dict[str, str | None]] = {
    "gpus": {
        "memory": "GB",
        "hbm_bandwidth": "TB/s",
        "bf16_dense": "TFLOP/s",
        "fp16_dense": "TFLOP/s",
        "fp8_dense": "TFLOP/s",
        "fp4_dense": "TFLOP/s",
        "int8_dense": "TFLOP/s",
        "fp32_dense": "TFLOP/s",
        "tf32_dense": "TFLOP/s",
        "sms": COUNT,
        "l2_cache": "MB",
        "infinity_cache": "MB",
        "smem_per_sm": "KiB",
        "smem_per_block": "KiB",
        "registers_per_sm": COUNT,
        "regfile_per_sm": "KiB",
        "max_threads_per_sm": COUNT,
        "max_blocks_per_sm": COUNT,
        "max_warps_per_sm": COUNT,
        "wavefront_size": COUNT,
        "nvlink_bandwidth": "GB/s",
        "tdp": "W",
        "boost_clock": "MHz",
        "tensor_clock": "MHz",
        "price_per_hour": "USD/hour",
    },
    "models": {
        "params": COUNT,
        "active_params": COUNT,
        "layers": COUNT,
        "hidden": COUNT,
        "heads": COUNT,
        "kv_heads": COUNT,
        "head_dim": COUNT,
        "intermediate": COUNT,
        "vocab": COUNT,
        "max_context": COUNT,
        "experts": COUNT,
        "active_experts": COUNT,
        "shared_experts": COUNT,
        "moe_intermediate": COUNT,
        "dense_layers": COUNT,
        "kv_lora_rank": COUNT,
        "q_lora_rank": COUNT,
        "qk_rope_head_dim": COUNT,
        "qk_nope_head_dim": COUNT,
        "v_head_dim": COUNT,
        "mtp_modules": COUNT,
    },
    "dtypes": {
        "bytes": "B",
        "bits": COUNT,
        "mantissa_bits": COUNT,
        "exponent_bits": COUNT,
        "max_normal": COUNT,
        "min_value": COUNT,
        "max_value": COUNT,
    },
    "links": {
        "bandwidth": "GB/s",
        "total_bandwidth": "GB/s",
        "line_rate": "Gbit/s",
        "latency": "us",
    },
}

# Fields every entry of a section must have; `name` and `source` are required everywhere.
REQUIRED: dict[str, tuple[str, ...]] = {
    "gpus": ("memory", "hbm_bandwidth", "bf16_dense", "sms", "tdp", "price_per_hour"),
    "models": (
        "params", "active_params", "layers", "hidden", "heads", "kv_heads",
        "head_dim", "intermediate", "vocab", "max_context",
    ),
    "dtypes": ("bytes", "bits"),
    "links": ("bandwidth", "latency"),
}


class CatalogueError(ValueError):
    """A catalogue file is unreadable or an entry breaks the contract."""


def load_catalogue(directory: str | Path | None = None) -> dict[str, dict[str, dict]]:
    """Return `{section: {key: {field: value}}}` for every `*.yaml` in `directory`.

    `directory` defaults to `questions/catalogue/`. The result is cached per directory
    and shared between callers: treat it as read-only. Raises `CatalogueError` (naming
    file, key and field) when a file is missing, malformed or breaks `SCHEMA`.
    """
    path = Path(directory) if directory is not None else CATALOGUE_DIR
    return _load_cached(str(path.resolve()))


@functools.lru_cache(maxsize=8)
def _load_cached(directory: str) -> dict[str, dict[str, dict]]:
    root = Path(directory)
    if not root.is_dir():
        raise CatalogueError(f"{root}: catalogue directory not found")
    catalogue = {
        file.stem: _load_section(file) for file in sorted(root.glob("*.yaml"))
    }
    missing = sorted(set(SCHEMA) - set(catalogue))
    if missing:
        raise CatalogueError(
            f"{root}: missing section file(s): {', '.join(s + '.yaml' for s in missing)}"
        )
    return catalogue


def _load_section(file: Path) -> dict[str, dict]:
    try:
        raw = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise CatalogueError(f"{file.name}: not valid YAML: {error}") from error
    if not isinstance(raw, dict) or not raw:
        raise CatalogueError(f"{file.name}: expected a mapping of keys to entries")
    section = file.stem
    return {
        str(key): _load_entry(file.name, section, key, entry) for key, entry in raw.items()
    }


def _load_entry(filename: str, section: str, key, entry) -> dict:
    where = f"{filename}: {key}"
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise CatalogueError(f"{where}: keys must match [a-z0-9_]+ (expressions use them)")
    if not isinstance(entry, dict):
        raise CatalogueError(f"{where}: expected a mapping of fields")
    for field in ("name", "source", *REQUIRED.get(section, ())):
        if field not in entry:
            raise CatalogueError(f"{where}: missing required field '{field}'")
    return {
        str(field): _load_value(f"{where}.{field}", section, field, value)
        for field, value in entry.items()
    }


def _load_value(where: str, section: str, field: str, value):
    if field in TEXT_FIELDS:
        if not isinstance(value, str) or not value.strip():
            raise CatalogueError(f"{where}: must be non-empty text")
        return value
    if isinstance(value, str) and value[:1].isdigit():
        value = _parse(where, value)
    elif not isinstance(value, (str, bool, int, float)):
        raise CatalogueError(
            f"{where}: must be a number, a quantity or text, not {type(value).__name__}"
        )
    expected_unit = SCHEMA.get(section, {}).get(field, "unchecked")
    if expected_unit != "unchecked":
        _check_dimension(where, value, expected_unit)
    return value


def _parse(where: str, text: str):
    try:
        quantity = parse_quantity(text)
    # The unit parser raises several exception types (unknown unit, syntax, pint
    # internals); all of them mean the same thing here, so re-raise with the location.
    except Exception as error:  # noqa: BLE001
        raise CatalogueError(f"{where}: cannot read quantity {text!r}: {error}") from error
    if quantity.dimensionless:
        # YAML 1.1 reads 8.03e9 as a string; a bare number must not pass as a quantity.
        raise CatalogueError(
            f"{where}: {text!r} has no unit; write a plain number "
            "(with a dot and a signed exponent, 8.03e+9, so YAML reads it as one)"
        )
    return quantity


def _check_dimension(where: str, value, expected_unit: str | None) -> None:
    if expected_unit is COUNT:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise CatalogueError(f"{where}: must be a plain number (a count), got {value!r}")
        return
    expected = parse_quantity(f"1 {expected_unit}")
    if not hasattr(value, "dimensionality") or value.dimensionality != expected.dimensionality:
        raise CatalogueError(
            f"{where}: must be a quantity like {expected_unit} "
            f"({expected.dimensionality}), got {value!r}"
        )
