"""``exact``: the output must equal the expected text byte for byte (no whitespace normalisation)."""


def check(output: str, expected: str, **options: object) -> bool:
    """True iff ``output == expected``. Extra ``options`` are accepted and ignored."""
    return output == expected
