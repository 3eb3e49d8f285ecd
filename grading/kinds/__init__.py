"""Answer kinds: one package each (``grading/kinds/<name>/``), listed by dotted path in
``grading.registry.KIND_PATHS`` and loaded on first use. ``base`` is the contract."""
