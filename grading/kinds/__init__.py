"""Answer kinds. Importing this package registers the built-in kinds."""

from grading.kinds import code, explain, formula, kernel, numeric  # noqa: F401  (registers them)
