"""Soak variants of the reliability tests are marked ``slow``: tests/conftest.py deselects every slow test unless
asked for (`-m slow`, or any -m naming slow, or RUN_SLOW=1), so the default run stays short."""
