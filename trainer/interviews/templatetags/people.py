"""`{{ user|display_name }}`: trainer.interviews.people's rule, for templates."""

from django import template

from trainer.interviews import people

register = template.Library()


@register.filter
def display_name(user) -> str:
    return people.display_name(user)
