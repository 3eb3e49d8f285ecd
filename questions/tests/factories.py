"""Small builders for question files and users in tests (no fixture files)."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

BASE_QUESTION = {
    "slug": "decode-floor-test",
    "seed": 1,
    "title": "The decode floor from weight bytes",
    "topic": "roofline",
    "difficulty": 2,
    "tags": ["decode"],
    "summary": "Decode reads every weight once per token.",
    "params": {
        "gpu": {"catalogue": "gpus", "choices": ["h100_sxm", "h200"]},
        "model": {"catalogue": "models", "choices": ["llama31_8b", "llama33_70b"]},
        "dtype": {"catalogue": "dtypes", "choices": ["bf16"]},
    },
    "derived": {
        "weight_bytes": "model.params * dtype.bytes",
        "floor": "weight_bytes / gpu.hbm_bandwidth",
    },
    "statement": "A {{ model.name }} in {{ dtype.name }} runs on one {{ gpu.name }}.\n\n"
                 "The step time is $t = W / B$.\n",
    "parts": [
        {
            "id": "floor",
            "kind": "numeric",
            "prompt": "What is the decode step's lower bound, in milliseconds?",
            "answer": "weight_bytes / gpu.hbm_bandwidth",
            "unit": "ms",
            "mistakes": [
                {"answer": "weight_bytes * 8 / gpu.hbm_bandwidth", "feedback": "You counted bits, not bytes."}
            ],
        },
        {
            "id": "kv_per_token",
            "kind": "formula",
            "prompt": "Write the KV bytes per token.",
            "symbols": {
                "L": {"description": "number of layers", "range": [16, 128], "integer": True},
                "h_kv": {"description": "KV heads", "range": [1, 16], "integer": True},
                "d": {"description": "head dimension", "range": [64, 256], "integer": True},
                "b": {"description": "bytes per element", "range": [1, 4], "unit": "B"},
            },
            "answer": "2 * L * h_kv * d * b",
            "mistakes": [{"answer": "L * h_kv * d * b", "feedback": "Keys and values are both cached."}],
        },
        {
            "id": "why_above_floor",
            "kind": "explain",
            "prompt": "Name what keeps a real server above the floor.",
            "rubric": [{"id": "kv_reads", "text": "KV-cache reads grow with batch and context."}],
            "model_answer": "KV reads, kernel launch gaps, imperfect bandwidth.",
        },
    ],
    "hints": ["Every weight crosses HBM once per decode step: $\\frac{W}{B}$."],
    "solution": "Weights are {{ weight_bytes | GB }}; the floor is {{ answers.floor | ms }}.\n",
    "followups": ["What changes with tensor parallelism over 8 GPUs?"],
    "checks": [{"expr": "weight_bytes", "equals": "16.06 GB", "rtol": 0.05, "when": {"model": "llama31_8b"}}],
}


def question_data(**overrides) -> dict:
    """A valid question as data; keyword arguments replace top-level keys."""
    data = copy.deepcopy(BASE_QUESTION)
    data.update(overrides)
    return data


def question_yaml(**overrides) -> str:
    return yaml.safe_dump(question_data(**overrides), sort_keys=False, allow_unicode=True, width=1000)


def write_question(bank_dir: Path, **overrides) -> Path:
    """Write a question file where the bank layout says it belongs."""
    data = question_data(**overrides)
    path = Path(bank_dir) / data["topic"] / f"{data['seed']:03d}-{data['slug']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(question_yaml(**overrides), encoding="utf-8")
    return path


def store_version(data: dict, source_text: str = ""):
    """Store question ``data`` as version 1 of a new question, without syncing or
    validating it (which would run a code question's solutions): tests that need a
    bank question in the database, as it is."""
    import hashlib
    import json

    from questions.models import Question, QuestionVersion

    question = Question.objects.create(
        slug=data["slug"], topic=data["topic"], difficulty=data["difficulty"], seed_number=data["seed"],
        title=data["title"], summary=data.get("summary", ""),
        part_kinds=[[part["id"], part["kind"]] for part in data["parts"]],
        interview_only=bool(data.get("interview_only", False)),
    )
    version = QuestionVersion.objects.create(
        question=question, number=1, source_text=source_text, data_json=json.dumps(data),
        # A hash of everything stored: caches keyed by content must tell tests' questions
        # apart, and several tests store different data under the same placeholder text.
        content_hash=hashlib.sha256((source_text + json.dumps(data, sort_keys=True)).encode()).hexdigest(),
        origin=QuestionVersion.Origin.FILE,
    )
    question.current_version = version
    question.save(update_fields=["current_version"])
    return version


def make_user(username: str, role: str | None = None, **fields):
    """A user in the role's group (created if missing, as trainer.roles makes them);
    admins are staff and hold the author permission through their group."""
    from django.contrib.auth.models import Group, Permission, User

    # No password: tests log in with force_login, and hashing one costs a second per user.
    user = User.objects.create_user(username, is_staff=(role == "admin"), **fields)
    if role:
        group, _ = Group.objects.get_or_create(name=role)
        if role == "admin":
            group.permissions.add(
                Permission.objects.get(content_type__app_label="questions", codename="author_questions")
            )
        user.groups.add(group)
    return user
