from scancheck.faces.tables import around, fit_columns, format_table


def test_format_table_aligns_columns():
    text = format_table([{"a": 1.23456, "b": "x"}, {"a": 2.0, "b": "yy"}], title="T")
    lines = text.splitlines()
    assert lines[0] == "T" and lines[2].startswith("-") and "1.23" in lines[3]
    # The second column starts at one place in the header and every row.
    assert {lines[1].index("b"), lines[3].index("x"), lines[4].index("yy")} == {lines[1].index("b")}


def test_fit_columns_cuts_only_the_named_columns_with_an_ellipsis():
    rows = fit_columns([{"a": "abcdef", "b": "abcdef"}], {"a": 4})
    assert rows == [{"a": "abc…", "b": "abcdef"}]


def test_fit_columns_wraps_the_named_columns_whole_and_rows_grow_to_fit():
    rows = fit_columns([{"a": "one two three\nfour", "b": "x"}], {"a": 7}, wrap=("a",))
    assert rows == [{"a": "one two\n  three\nfour", "b": "x"}]
    lines = format_table(rows).splitlines()
    assert [ln.rstrip() for ln in lines[2:]] == ["one two  x", "  three", "four"]


def test_around_keeps_the_words_sought_in_view_within_the_width():
    text = "logic error: differs from the exact scan; every output is " + "x " * 40 + \
        "as if accumulated in int16 (smallest case n=1, index 0)"
    for words in ("as if accumulated in int16", "logic error", "index 0)"):
        cut = around(text, words, 30)
        assert len(cut) == 30 and words in cut
    assert around(text, "nowhere", 30) == text[:29] + "…"
    assert around("short", "short", 30) == "short"
