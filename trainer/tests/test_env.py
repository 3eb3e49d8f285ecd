import pytest

from trainer.env import env_bool, env_int, env_list


def test_env_bool_reads_common_spellings(monkeypatch):
    monkeypatch.setenv("FLAG", "yes")
    assert env_bool("FLAG", False) is True
    monkeypatch.setenv("FLAG", "0")
    assert env_bool("FLAG", True) is False


def test_env_bool_rejects_garbage(monkeypatch):
    monkeypatch.setenv("FLAG", "maybe")
    with pytest.raises(ValueError, match="FLAG"):
        env_bool("FLAG", False)


def test_env_int_and_list(monkeypatch):
    monkeypatch.setenv("N", "12")
    monkeypatch.setenv("HOSTS", "a.example, b.example,,")
    assert env_int("N", 3) == 12
    assert env_int("UNSET_N", 3) == 3
    assert env_list("HOSTS", []) == ["a.example", "b.example"]
    monkeypatch.setenv("N", "twelve")
    with pytest.raises(ValueError, match="N='twelve'"):
        env_int("N", 3)
