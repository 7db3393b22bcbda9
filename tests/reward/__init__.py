"""Test package (makes imports unambiguous: `tests.conftest`, never a shadowing `reward`)."""
