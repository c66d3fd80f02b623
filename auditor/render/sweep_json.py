"""Render a sweep as the ``qg-audit.sweep/1`` JSON document (docs/sweep.md)."""

from __future__ import annotations

import json


def render(sweep) -> str:
    return json.dumps(sweep.to_json(), indent=2) + "\n"
