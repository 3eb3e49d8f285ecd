"""Browser tests' view of the Content-Security-Policy: every violation a page reports.

`watch_csp(page)` before the first navigation; `assert_no_csp_violations(page, found)`
after the steps under test. Violations are collected in Python, so they survive the
page navigating away from the document that reported them.
"""

PREFIX = "CSP violation:"

# Runs in every document the page loads, before the page's own scripts. The browser
# fires securitypolicyviolation for each refused script, style, eval, frame...; logging
# it through console.error hands it to Playwright's console event.
RECORDER = f"""
document.addEventListener("securitypolicyviolation", (event) => {{
  console.error({PREFIX!r} + " " + JSON.stringify({{
    directive: event.violatedDirective, blocked: event.blockedURI, sample: event.sample,
    source: event.sourceFile, line: event.lineNumber, page: document.location.pathname,
  }}));
}}, true);
"""


def watch_csp(page) -> list[str]:
    """Record the page's CSP violations from now on; returns the (live) list of them."""
    found: list[str] = []

    def on_console(message):
        # Chromium's own "Refused to ... Content Security Policy" messages count too.
        if message.text.startswith(PREFIX) or "Content Security Policy" in message.text:
            found.append(message.text)

    page.add_init_script(RECORDER)
    page.on("console", on_console)
    return found


def assert_no_csp_violations(page, found: list[str]) -> None:
    # Violation events are queued as tasks: let the current document run them first.
    page.evaluate("() => new Promise((resolve) => setTimeout(resolve, 50))")
    assert found == [], "\n".join(found)
