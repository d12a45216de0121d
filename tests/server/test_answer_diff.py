"""The compare page's word diff of two answers: words for spaced languages, characters for CJK."""

from ragretrieval.server.answer_diff import word_diff


def test_words_inserted_and_deleted_are_marked_on_their_side():
    old, new = word_diff("The cat sat on the mat.", "The dog sat on a mat.")
    assert ("del", "cat") in old and ("del", "the") in old and not any(kind == "ins" for kind, _ in old)
    assert ("ins", "dog") in new and ("ins", "a") in new and not any(kind == "del" for kind, _ in new)
    assert "".join(text for _, text in old) == "The cat sat on the mat."
    assert "".join(text for _, text in new) == "The dog sat on a mat."


def test_chinese_is_compared_character_by_character():
    old, new = word_diff("检索到的文档很好", "检索的文档不好")
    assert ("del", "到") in old and ("del", "很") in old
    assert ("ins", "不") in new and ("same", "的文档") in new


def test_answers_too_long_to_compare_are_left_whole():
    assert word_diff("word " * 7000, "other " * 10) is None
