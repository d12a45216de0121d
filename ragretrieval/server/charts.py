"""Chart geometry for the server-rendered SVG of the trends page (templates/_charts.html draws it): no script, no
CDN, so the pages' strict CSP holds and the charts print. Coordinates are in a fixed view box that the browser
scales to the page's width; every text is drawn by the template (escaped, translated there)."""

from __future__ import annotations

import math

WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 40


def _ticks(low: float, high: float, count: int = 4) -> list[float]:
    if high <= low:
        return [low]
    step = 10 ** math.floor(math.log10((high - low) / count))
    for factor in (1, 2, 5, 10):
        if (high - low) / (step * factor) <= count:
            step *= factor
            break
    first = math.ceil(low / step) * step
    return [round(first + i * step, 12) for i in range(int((high - first) / step + 1e-9) + 1)]


def _scale(values: list[float], size: float, start: float, flip: bool) -> tuple:
    low, high = min(values), max(values)
    if high == low:
        pad = abs(low) * 0.1 or 1.0
        low, high = low - pad, high + pad
    else:
        pad = (high - low) * 0.08
        low, high = low - pad, high + pad

    def place(value: float) -> float:
        share = (value - low) / (high - low)
        return round(start + (1 - share if flip else share) * size, 2)

    return place, low, high


def line_chart(values: list[float | None]) -> dict:
    """One point per evaluation in order; a gap where an evaluation has no value."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    known = [v for v in values if v is not None]
    if not known:
        return {"points": [], "path": "", "yticks": [], "width": WIDTH, "height": HEIGHT}
    place_y, low, high = _scale(known, plot_h, TOP, flip=True)
    step = plot_w / max(1, len(values) - 1)
    points, path, pen_up = [], [], True
    for i, value in enumerate(values):
        x = round(LEFT + (i * step if len(values) > 1 else plot_w / 2), 2)
        if value is None:
            pen_up = True
            points.append(None)
            continue
        y = place_y(value)
        path.append(f"{'M' if pen_up else 'L'}{x},{y}")
        pen_up = False
        points.append({"x": x, "y": y, "value": value})
    return {"points": points, "path": " ".join(path), "width": WIDTH, "height": HEIGHT,
            "yticks": [{"y": place_y(t), "value": t} for t in _ticks(low, high)],
            "left": LEFT, "right": WIDTH - RIGHT, "top": TOP, "bottom": HEIGHT - BOTTOM}


def scatter_chart(points: list[dict]) -> dict:
    """Points with x, y and front (on the Pareto front); the front joined as a step line, cheapest first."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    if not points:
        return {"points": [], "front": "", "xticks": [], "yticks": [], "width": WIDTH, "height": HEIGHT}
    place_x, xlow, xhigh = _scale([p["x"] for p in points], plot_w, LEFT, flip=False)
    place_y, ylow, yhigh = _scale([p["y"] for p in points], plot_h, TOP, flip=True)
    drawn = [{**p, "cx": place_x(p["x"]), "cy": place_y(p["y"])} for p in points]
    front = sorted((p for p in drawn if p["front"]), key=lambda p: (p["x"], p["y"]))
    return {"points": drawn, "front": " ".join(f"{p['cx']},{p['cy']}" for p in front), "width": WIDTH,
            "height": HEIGHT, "xticks": [{"x": place_x(t), "value": t} for t in _ticks(xlow, xhigh)],
            "yticks": [{"y": place_y(t), "value": t} for t in _ticks(ylow, yhigh)],
            "left": LEFT, "right": WIDTH - RIGHT, "top": TOP, "bottom": HEIGHT - BOTTOM}
