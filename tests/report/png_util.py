"""png_util.py: the size a PNG file says it has, for the figure checks
(report_check.py, figure_check.py).  Not a test."""
import struct


def png_size(path):
    """(width, height) from the IHDR chunk, or None when path is no PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])
