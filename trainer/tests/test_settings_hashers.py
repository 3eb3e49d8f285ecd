"""The suite hashes test passwords with MD5 (conftest.py, for speed); the product must not."""

from django.conf import global_settings

from trainer import settings as product_settings


def test_the_product_hashes_passwords_with_a_slow_key_derivation():
    hashers = getattr(product_settings, "PASSWORD_HASHERS", global_settings.PASSWORD_HASHERS)
    assert hashers[0] in (
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.Argon2PasswordHasher",
        "django.contrib.auth.hashers.ScryptPasswordHasher",
    )
    assert not any("MD5" in hasher or "Unsalted" in hasher for hasher in hashers)


def test_the_suite_hashes_with_md5_for_speed(django_user_model, db):
    user = django_user_model.objects.create_user("hash-check", password="a-long-test-password-1")
    assert user.password.startswith("md5$")
