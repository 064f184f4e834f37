from scancheck.faces.tables import fit_columns, format_table


def test_format_table_aligns_columns():
    text = format_table([{"a": 1.23456, "b": "x"}, {"a": 2.0, "b": "yy"}], title="T")
    lines = text.splitlines()
    assert lines[0] == "T" and lines[2].startswith("-") and "1.23" in lines[3]
    # The second column starts at one place in the header and every row.
    assert {lines[1].index("b"), lines[3].index("x"), lines[4].index("yy")} == {lines[1].index("b")}


def test_fit_columns_cuts_only_the_named_columns_with_an_ellipsis():
    rows = fit_columns([{"a": "abcdef", "b": "abcdef"}], {"a": 4})
    assert rows == [{"a": "abc…", "b": "abcdef"}]
