"""report_checks.py: what the checkers of tlm-report's output share
(tests/report/report_check.py and figure_check.py, tests/e2e/e2e_check.py):
the tally of their checks, the comparison of a number with its
recomputation, and the size a PNG file says it has.  Not a test."""
import math
import struct


class Tally:
    """Numbered checks, printed as TAP lines ("ok N - what"), or with
    diag as diagnostics ("# ok   what", "# FAIL what") for a caller that
    reports one TAP line for them all.  Called as check(cond, what), it
    returns cond; .n checks, .failed of them failed."""

    def __init__(self, diag=False):
        self.n = self.failed = 0
        self.diag = diag

    def __call__(self, cond, what):
        self.n += 1
        if not cond:
            self.failed += 1
        if self.diag:
            print(("# ok   " if cond else "# FAIL ") + what)
        else:
            print(f"{'ok' if cond else 'not ok'} {self.n} - {what}")
        return cond


def close(a, b, rel=1e-9):
    """a equals b to rel (None only equals None, an infinity only itself)."""
    if a is None or b is None:
        return a is None and b is None
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def png_size(path):
    """(width, height) from the IHDR chunk, or None when path is no PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])
