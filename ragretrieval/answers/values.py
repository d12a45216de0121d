"""Numbers and dates as people write them in Chinese and English answers, for the legal checks.

Numbers: ``42000``, ``42,000``, ``4.2万``, ``四万二千``, ``两千零五十``, ``4万2千`` and full-width digits all read as
the same value; units 十 百 千 万 亿 scale what precedes them. Chinese digits written one after another with no unit
between them are read digit by digit, as years and room numbers are written (``二〇二〇`` is 2020, ``三〇五`` 305).
Units with no digit before them are not a number
(``万元``, ``千万别``: an idiom), except a leading 十, which is 一十 (``十万`` is 100000, ``十亿`` 10^9).
Dates: ``2020-08-30``, ``2020/8/30``, ``2020.8.30`` and ``2020年8月30日`` read as ``2020-08-30`` (Arabic digits only;
a date written in Chinese numerals is read as its numbers, not as a date).
"""

from __future__ import annotations

import re
import unicodedata

DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
LARGE_UNITS = {"万": 10_000, "亿": 100_000_000}
_ARABIC = r"\d+(?:,\d{3})*(?:\.\d+)?"
_CHINESE = "[零〇一二两三四五六七八九十百千万亿]"
NUMBER = re.compile(rf"(?:{_ARABIC}|{_CHINESE})+")
DATE = re.compile(r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?")
_TOKEN = re.compile(rf"{_ARABIC}|{_CHINESE}")


def _value(text: str) -> float | None:
    """One number token run (``4.2万``, ``四万二千``); None when it is units alone or does not read as a number."""
    total = section = 0.0
    pending: float | None = None
    seen_digit, last_large, previous = False, None, None
    for token in _TOKEN.findall(text):
        if token in SMALL_UNITS:
            seen_digit = seen_digit or token == "十"  # a leading 十 is 一十: 十万 is 100000 (千万 alone is an idiom)
            section += (pending if pending is not None else 1) * SMALL_UNITS[token]
            pending = None
        elif token in LARGE_UNITS:
            if pending is None and section == 0 and total == 0:
                return None
            unit = LARGE_UNITS[token]
            if last_large is not None and unit < last_large:  # 一亿二千万: 万 scales only what follows 亿
                total += (section + (pending or 0)) * unit
            else:
                total = (total + section + (pending or 0)) * unit
                last_large = unit
            section, pending = 0.0, None
        elif token in DIGITS:
            seen_digit = True
            if previous in DIGITS and pending is not None:  # digit after digit: 二〇二〇 is 2020
                pending = pending * 10 + DIGITS[token]
            elif token not in ("零", "〇"):  # a 零 after a unit marks a gap (两千零五十)
                pending = DIGITS[token]
        else:
            seen_digit = True
            pending = float(token.replace(",", ""))
        previous = token
    if not seen_digit and section == 0:
        return None
    return total + section + (pending or 0)


def numbers_in(text: str) -> set[float]:
    """Every number written in `text`, as values (``42,000元`` and ``四万二千`` give 42000.0)."""
    text = unicodedata.normalize("NFKC", text)
    found = set()
    for match in NUMBER.finditer(text):
        value = _value(match.group(0))
        if value is not None:
            found.add(round(value, 6))
    return found


def dates_in(text: str) -> set[str]:
    """Every date written in `text`, as ``YYYY-MM-DD``."""
    text = unicodedata.normalize("NFKC", text)
    found = set()
    for year, month, day in DATE.findall(text):
        if 1 <= int(month) <= 12 and 1 <= int(day) <= 31:
            found.add(f"{int(year):04d}-{int(month):02d}-{int(day):02d}")
    return found


def has_number(text: str, value: float) -> bool:
    return round(float(value), 6) in numbers_in(text)
