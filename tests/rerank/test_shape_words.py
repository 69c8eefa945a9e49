"""Template and shape codes in words (issue 24, point 9): every window template's value decoded
position by position, shapes and bare shapes read out, checked against the feature generator's
own strings on real words."""

from __future__ import annotations

import pytest

from nerstudio.rerank.glossary import decode_value, explain_feature
from nerstudio.text.shapes import collapsed_shape, describe_shape


@pytest.mark.parametrize(
    "code,flagged,words",
    [
        ("Aa1", True, "capitalised; a word usually written in lower case"),
        ("Aa0", True, "capitalised"),
        ("A0", True, "all capitals"),
        ("a1", True, "lower case; a word usually written in lower case"),
        ("A.A.0", True, "capitals “.” capitals “.”"),
        ("0-0-0", False, "digits “-” digits “-” digits"),
        ("0", False, "a number"),
        ("00", True, "a number"),  # the digits, then the flag 0
        ("NULL", True, "none (outside the sentence)"),
    ],
)
def test_describe_shape(code, flagged, words):
    assert describe_shape(code, flagged) == words


def test_a_shape_read_back_describes_the_word():
    for word, expect in (
        ("Meridia", "capitalised"),
        ("NATO", "all capitals"),
        ("1996-08-30", "digits “-” digits"),
    ):
        assert describe_shape(collapsed_shape(word) + "0").startswith(expect)


def test_window_templates_decode_each_position():
    assert decode_value("TO101:LOC=A1 IN A0") == (
        "word 2 before the entity: all capitals; a word usually written in lower case · "
        "word before the entity: “IN” · entity's first word: all capitals"
    )
    assert (
        decode_value("BE10=Aa0 NULL")
        == "entity's last word: capitalised · word after the entity: none (outside the sentence)"
    )
    assert decode_value("TO2111=Aa0 Aa1 a1").count("·") == 2
    assert (
        decode_value("GF=Aa1 Aa0")
        == "capitalised; a word usually written in lower case · capitalised"
    )
    assert decode_value("WE=Meridia") == ""  # words need no decoding
    # a value that does not fit its template: nothing invented
    assert decode_value("TO101=A1 IN") == ""


def test_explain_feature_keeps_the_template_line():
    text = explain_feature("BO01:ORG=said Aa1")
    assert text.startswith(
        "BO01 (ORG entities): word before the entity + shape of its first word — "
    )
    assert text.endswith(
        "word before the entity: “said” · entity's first word: capitalised; "
        "a word usually written in lower case"
    )
