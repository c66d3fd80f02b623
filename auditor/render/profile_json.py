"""Render a profile as the ``qg-audit.profile/1`` JSON document (see docs/profile.md)."""

from __future__ import annotations

import json
from typing import Any


def render(profile, extra: dict[str, Any] | None = None) -> str:
    """``profile.to_json()`` plus run context (``target`` or ``source``), pretty-printed."""
    doc = profile.to_json()
    if extra:
        doc.update(extra)
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"
