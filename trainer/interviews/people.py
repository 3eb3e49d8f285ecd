"""How pages and exports name a person: the one rule, so no page shows a guest's id.

A guest's identity is made when they join (services.invite_accept) with the name they
typed as its first name; an account names itself by its full name if it has one. Either
way the name is untrusted text: templates autoescape it, Markdown puts it through
markdown_safe.
"""

from __future__ import annotations


def display_name(user) -> str:
    """The name `user` gave (a guest's display name, an account's full name), else the
    username; "" for no user."""
    if user is None or not getattr(user, "is_authenticated", False):
        return ""
    return user.get_full_name().strip() or user.get_username()


def clean_name(typed: str) -> str:
    """A typed name as one line: runs of whitespace (line breaks included) become one
    space, other control characters are dropped."""
    one_line = " ".join(str(typed).split())
    return "".join(char for char in one_line if char.isprintable())
