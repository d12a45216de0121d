"""Text files in whatever encoding a spreadsheet saved them: UTF-8 as it is, anything else detected by
charset-normalizer (a maintained detector that tries every codec Python has and weighs how chaotic and how coherent
each decoding reads) and converted, or refused when the detection is not sure.

Why refuse: a CSV that Excel saved on a Chinese Windows is GBK (GB18030's subset); the same bytes read as Korean
(cp949) or Japanese (cp932) decode without an error into other, wrong characters. With a few hundred bytes of Chinese
charset-normalizer tells them apart; on one short line several codecs read equally well. Then we do not guess: the
user is asked to save the file as "CSV UTF-8", which every spreadsheet offers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import RagretrievalError

UTF8_BOM = b"\xef\xbb\xbf"
PLAUSIBLE = 0.1  # decodings whose chaos is within this of the best one's are as plausible


class EncodingError(RagretrievalError, ValueError):
    """Bytes whose encoding cannot be told for sure."""


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # the codec's name as Python knows it: utf_8, gb18030, utf_16, ...
    converted: bool  # False for UTF-8 (nothing to say), True when another encoding was detected


def decode_text(data: bytes, name: str = "the file") -> Decoded:
    """`data` as text; UTF-8 (with or without a BOM) first, else the encoding charset-normalizer is sure of.
    `EncodingError` names the file and what to do."""
    try:
        return Decoded(data.removeprefix(UTF8_BOM).decode("utf-8"), "utf_8", False)
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    found = from_bytes(data)
    best = found.best()
    if best is None:
        raise EncodingError(f"{name} is not text in any encoding we know (is it a spreadsheet's own format, such as "
                            ".xlsx?); save it as \"CSV UTF-8\" and import it again")
    text = str(best)
    rivals = sorted({m.encoding for m in found
                     if m.encoding != best.encoding and m.chaos <= best.chaos + PLAUSIBLE and str(m) != text})
    if rivals:
        raise EncodingError(f"{name} is not UTF-8, and its encoding cannot be told for sure (it reads as "
                            f"{best.encoding} but also as {', '.join(rivals)}); save it as \"CSV UTF-8\" and import "
                            "it again")
    return Decoded(text.removeprefix("\ufeff"), best.encoding, True)
