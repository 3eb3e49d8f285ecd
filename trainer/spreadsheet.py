"""Cells for CSV downloads that people open in a spreadsheet."""

# A spreadsheet reads a cell starting with one of these as a formula (=HYPERLINK(...)
# in a typed answer would run when the CSV is opened): OWASP's advice is to prefix such
# text cells with a quote, which makes the spreadsheet show them as text.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value):
    """`value` as a CSV cell a spreadsheet shows as text, never runs as a formula;
    anything that is not a string is returned unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value
