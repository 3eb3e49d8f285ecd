"""Changes to accounts: sign-up and role assignment."""

from django.contrib.auth.models import Group, User
from django.db import transaction

from trainer.roles import Role


@transaction.atomic
def user_create(*, username: str, password: str, email: str = "", role: Role = Role.CANDIDATE) -> User:
    """Create a user holding `role`. Admins are also staff so the Django admin opens."""
    user = User.objects.create_user(username=username, password=password, email=email)
    user_set_role(user, role)
    return user


def user_set_role(user: User, role: Role) -> None:
    user.groups.remove(*Group.objects.filter(name__in=Role.values))
    user.groups.add(Group.objects.get(name=role.value))
    user.is_staff = role == Role.ADMIN
    user.save(update_fields=["is_staff"])
