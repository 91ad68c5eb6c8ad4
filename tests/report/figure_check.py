#!/usr/bin/env python3
# figure_check.py: checks the layout of tlm-report's figures from their SVG
# alone, as issue 27 asks: every data mark inside its axes (markers inside
# with room to spare: no point on the frame), the legend inside the canvas,
# outside every plot (so never over data) and at most a fifth of the
# width, text present as text (no glyph outlines), every text inside the
# canvas and overlapping neither another text nor a plot area.  Text
# extents come from the data-w width tlm-report measured with the font's
# own advance widths (DejaVu Sans, the font named first; within 2% of what
# rsvg-convert draws).  The PNG beside each SVG must be the same picture at
# twice the size, the PDF a PDF with its text in fonts.
#
# usage: figure_check.py DIR NAME... (the figures DIR/NAME.svg must hold)
# Prints TAP lines ("ok N - ..."), no plan; exits 1 when a check failed.
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from report_checks import Tally, png_size  # noqa: E402

DIR, NAMES = sys.argv[1], sys.argv[2:]
ok = Tally()


def local(tag):
    return tag.rsplit("}", 1)[-1]


def path_points(d):
    """Absolute M/L/H/V/Z paths (all tlm-report writes) as their vertices."""
    pts, x, y = [], 0.0, 0.0
    for cmd, args in re.findall(r"([MLHVZ])([^MLHVZ]*)", d):
        nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", args)]
        if cmd in "ML":
            for i in range(0, len(nums), 2):
                x, y = nums[i], nums[i + 1]
                pts.append((x, y))
        elif cmd == "H":
            for v in nums:
                x = v
                pts.append((x, y))
        elif cmd == "V":
            for v in nums:
                y = v
                pts.append((x, y))
    return pts


def mark_box(e):
    t = local(e.tag)
    if t == "circle":
        cx, cy, r = (float(e.get(a)) for a in ("cx", "cy", "r"))
        return cx - r, cy - r, cx + r, cy + r
    if t == "rect":
        x, y, w, h = (float(e.get(a)) for a in ("x", "y", "width", "height"))
        return x, y, x + w, y + h
    pts = path_points(e.get("d"))
    return min(p[0] for p in pts), min(p[1] for p in pts), max(p[0] for p in pts), max(p[1] for p in pts)


def text_box(e):
    """The extent of a <text>: its advance width (data-w) along the
    baseline from the anchor, 0.8 em above it to 0.3 em below (descenders,
    subscripts); rotated -90 degrees for a y label."""
    x, y, size, w = float(e.get("x")), float(e.get("y")), float(e.get("font-size")), float(e.get("data-w"))
    start = {"middle": 0.5, "end": 1.0}.get(e.get("text-anchor"), 0.0)
    if "rotate(-90" in (e.get("transform") or ""):
        return x - 0.8 * size, y - (1 - start) * w, x + 0.3 * size, y + start * w
    return x - start * w, y - 0.8 * size, x - start * w + w, y + 0.3 * size


def overlap(a, b, slack=0.5):
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


def check(name):
    svg = os.path.join(DIR, name + ".svg")
    if not ok(os.path.exists(svg), f"{name}.svg written"):
        return
    raw = open(svg, "rb").read()
    root = ET.fromstring(raw)
    W, H = (float(re.match(r"[\d.]+", root.get(a) or "0").group(0)) for a in ("width", "height"))
    frames = {e.get("data-axes"): tuple(float(e.get(a)) for a in ("x", "y", "width", "height"))
              for e in root.iter() if e.get("class") == "frame"}
    ok(frames and all(x >= 0 and y >= 0 and x + w <= W and y + h <= H for x, y, w, h in frames.values()),
       f"{name}: {len(frames)} axes, each inside the {W:.0f}x{H:.0f} canvas")
    # data: every mark of an axes inside that axes' frame; markers with room to spare
    bad, marks, lines = [], 0, 0
    for g in root.iter():
        if local(g.tag) != "g" or g.get("class") != "data":
            continue
        if g.get("data-axes") not in frames:
            bad.append("data without its axes' frame")
            continue
        fx, fy, fw, fh = frames[g.get("data-axes")]
        for e in g:
            cls = e.get("class")
            if cls == "mark":
                x0, y0, x1, y1 = mark_box(e)
                marks += 1
                if not (x0 > fx + 0.5 and x1 < fx + fw - 0.5 and y0 > fy + 0.5 and y1 < fy + fh - 0.5):
                    bad.append(f"marker at {x0:.1f},{y0:.1f} on or past the frame {fx:.1f},{fy:.1f} {fw:.1f}x{fh:.1f}")
            elif local(e.tag) == "path":
                lines += 1
                for x, y in path_points(e.get("d")):
                    # coordinates are rounded to 0.1 px
                    if not (fx - 0.06 <= x <= fx + fw + 0.06 and fy - 0.06 <= y <= fy + fh + 0.06):
                        bad.append(f"{cls} point {x:.1f},{y:.1f} outside the frame")
                        break
    ok(not bad and marks + lines > 0,
       f"{name}: {marks} markers and {lines} lines, bands and bars inside their axes, no marker on the frame"
       + (f" ({'; '.join(bad[:3])})" if bad else ""))
    # the legend
    box = [e for e in root.iter() if e.get("class") == "legend-box"]
    if box:
        x, y, w, h = (float(box[0].get(a)) for a in ("x", "y", "width", "height"))
        lb = (x, y, x + w, y + h)
        ok(x >= 0 and y >= 0 and x + w <= W and y + h <= H and w <= W / 5 and
           not any(overlap(lb, (fx, fy, fx + fw, fy + fh), 0) for fx, fy, fw, fh in frames.values()),
           f"{name}: legend {w:.0f}x{h:.0f} inside the canvas, {w / W:.0%} of its width, over no axes")
    # text as text, inside the canvas, overlapping nothing
    texts = [e for e in root.iter() if local(e.tag) == "text"]
    title = root.find("{http://www.w3.org/2000/svg}title")
    words = "".join("".join(t.itertext()) for t in texts)
    ok(len(texts) >= 5 and title is not None and title.text and title.text in words and
       b"<use" not in raw and b"glyph" not in raw and not any(local(c.tag) == "path" for t in texts for c in t.iter()),
       f"{name}: {len(texts)} texts as <text> (title '{title.text if title is not None else ''}'), no glyph outlines")
    if any(t.get("data-w") is None for t in texts):
        ok(False, f"{name}: texts without their measured width (not tlm-report's SVG?)")
        return
    boxes = [(text_box(t), "".join(t.itertext())) for t in texts]
    out = [s for b, s in boxes if b[0] < 0 or b[1] < 0 or b[2] > W or b[3] > H]
    ok(not out, f"{name}: every text inside the canvas" + (f" (not: {out[:3]})" if out else ""))
    clash = [(a[1], b[1]) for i, a in enumerate(boxes) for b in boxes[i + 1:] if overlap(a[0], b[0])]
    ok(not clash, f"{name}: no two texts overlap" + (f" ({clash[:3]})" if clash else ""))
    over = [s for b, s in boxes for fx, fy, fw, fh in frames.values() if overlap(b, (fx, fy, fx + fw, fy + fh))]
    ok(not over, f"{name}: no text over a plot area" + (f" ({over[:3]})" if over else ""))
    ok(len(raw) < 200_000, f"{name}.svg: {len(raw)} bytes (PLplot's were 200-330 KB)")
    png = os.path.join(DIR, name + ".png")
    if os.path.exists(png):
        dims = png_size(png)
        ok(dims == (int(2 * W), int(2 * H)), f"{name}.png: {dims}, the SVG at twice its size")
    pdf = os.path.join(DIR, name + ".pdf")
    if os.path.exists(pdf):
        data = open(pdf, "rb").read()
        ok(data.startswith(b"%PDF-") and b"/Font" in data and len(data) < 500_000,
           f"{name}.pdf: a PDF with fonts (text as text), {len(data)} bytes")


for name in NAMES:
    check(name)
sys.exit(1 if ok.failed else 0)
