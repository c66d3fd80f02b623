"""auditor.render.json_text: json.dumps(indent=2) byte for byte, except long lists one item per line."""

import json

from auditor.render import LONG_LIST, json_text


def test_small_documents_are_written_as_json_dumps_indent_2_writes_them():
    docs = [
        {"a": 1, "b": [1, 2, {"x": "line\nbreak", "y": []}], "c": {}, "d": None, "e": {1: 2, "k": True}},
        {"nan": float("nan"), "inf": float("inf"), "text": "\u00e9\u2028\x1b[31m"},
        [], {}, 3, "s", [[1, [2, {"z": (1, 2)}]]],
    ]
    for doc in docs:
        assert json_text(doc) == json.dumps(doc, indent=2) + "\n", doc


def test_a_long_list_of_records_is_one_compact_line_per_record_and_parses_to_the_same_value():
    records = [{"v": 1, "pid": i, "values": {"num_workers": i % 3}} for i in range(LONG_LIST + 1)]
    doc = {"verdict": "pass", "reports": records, "observed": {"workers": 2}}
    text = json_text(doc)
    assert json.loads(text) == doc
    lines = text.splitlines()
    assert len(lines) == len(json.dumps(dict(doc, reports=[]), indent=2).splitlines()) + len(records) + 1
    assert '    {"v": 1, "pid": 0, "values": {"num_workers": 0}},' in lines
    # a list at the limit keeps json's own layout
    short = {"reports": records[:LONG_LIST]}
    assert json_text(short) == json.dumps(short, indent=2) + "\n"
