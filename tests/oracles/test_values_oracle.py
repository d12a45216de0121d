"""Numbers as people write them (values.py) against a reference that writes every integer below 10^12 in Chinese
numerals, the usual way and its variants, and in Arabic digits with and without separators and units."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragretrieval.answers.values import dates_in, has_number, numbers_in

DIGITS = "零一二三四五六七八九"


def below_ten_thousand(n: int, two: str) -> str:
    """1 <= n < 10^4 in numerals: a 零 for each run of missing places between written ones."""
    out, gap = "", False
    for unit, place in (("千", 1000), ("百", 100), ("十", 10), ("", 1)):
        digit = n // place % 10
        if digit == 0:
            gap = gap or bool(out)
            continue
        if gap:
            out, gap = out + "零", False
        out += (two if digit == 2 and unit in ("千", "百") else DIGITS[digit]) + unit
    return out


def chinese(n: int, two: str = "二", short_ten: bool = False) -> str:
    """n < 10^12 the way it is written: 一亿零五百万, 两千零五十, 十五 (with `short_ten`)."""
    if n == 0:
        return "零"
    groups = [(n // 10**8, "亿"), (n // 10**4 % 10**4, "万"), (n % 10**4, "")]
    out, gap = "", False
    for value, unit in groups:
        if value == 0:
            gap = gap or bool(out)
            continue
        if out and (gap or value < 1000):
            out += "零"
        out, gap = out + below_ten_thousand(value, two) + unit, False
    if short_ten and out.startswith("一十"):
        out = out[1:]
    return out


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 10**12 - 1), st.sampled_from(["二", "两"]), st.booleans())
def test_every_integer_in_chinese_numerals_reads_as_itself(n, two, short_ten):
    text = chinese(n, two, short_ten)
    assert numbers_in(f"共{text}元") == {n}, text
    assert has_number(f"共{text}元", n)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**12 - 1), st.sampled_from(["零", "〇"]), st.sampled_from(["二", "两"]))
def test_digits_written_one_by_one_read_as_the_number(n, zero, two):
    """二〇二〇, 一九九八, 三〇五: each decimal digit as its numeral, no units (leading zeros, as in 〇五, are dropped)."""
    numerals = (zero + DIGITS[1:]).replace("二", two)
    text = "".join(numerals[int(c)] for c in str(n))
    assert numbers_in(f"于{text}年") == {n}, text
    assert numbers_in(f"房间{zero}{text}号") == {n}, text


def test_digits_one_by_one_beside_units_and_dates():
    assert numbers_in("二〇二〇年八月三十日") == {2020, 8, 30}  # a date in numerals: its numbers, not a date
    assert numbers_in("二〇万") == {200_000} and numbers_in("三百零五") == {305} and numbers_in("一千零零五") == {1005}
    assert numbers_in("两千零五十") == {2050} and numbers_in("〇") == {0} and numbers_in("一二三") == {123}


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**12 - 1))
def test_arabic_forms_read_as_the_same_value(n):
    wide = "".join(chr(ord(c) + 0xFEE0) for c in str(n))  # full-width digits
    assert numbers_in(f"共{n}元") == numbers_in(f"共{n:,}元") == numbers_in(f"共{wide}元") == {n}
    if n >= 10_000 and n % 1000 == 0:
        tenths = n % 10_000 // 1000
        assert numbers_in(f"{n // 10_000}{f'.{tenths}' if tenths else ''}万") == {n}  # 4.2万
        wan, rest = divmod(n, 10_000)
        if rest >= 1000:
            assert numbers_in(f"{wan}万{rest // 1000}千") == {wan * 10_000 + rest // 1000 * 1000}  # 4万2千


@settings(max_examples=200, deadline=None)
@given(st.integers(1900, 2099), st.integers(1, 12), st.integers(1, 31), st.sampled_from(["-", "/", ".", "年"]))
def test_dates_in_any_separator_read_as_iso(year, month, day, separator):
    text = f"{year}年{month}月{day}日" if separator == "年" else f"{year}{separator}{month}{separator}{day}"
    assert dates_in(f"在{text}转账") == {f"{year:04d}-{month:02d}-{day:02d}"}


def test_dates_outside_the_calendar_are_not_dates():
    assert dates_in("2020-0-5, 2020-12-32, 2020-13-01") == set()
    assert dates_in("2020-12-31 2020-1-1") == {"2020-12-31", "2020-01-01"}


def test_units_alone_and_lone_zero():
    assert numbers_in("万元以上") == set() and numbers_in("千万别") == set()
    assert numbers_in("零元") == {0} and numbers_in("十") == {10} and numbers_in("百") == {100}
    assert numbers_in("赔偿十万元") == {100_000} and numbers_in("十亿") == {10**9}  # a leading 十 is 一十
