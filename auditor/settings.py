"""The project's ``[tool.qg-audit]`` table, read with the standard library's TOML parser.

Kept apart from the catalogue (PyYAML) so that the scan's replay fast path can read the
settings that decide its walk without importing anything heavy.
"""

from __future__ import annotations

from pathlib import Path

from auditor.exitcodes import UsageError


def project_settings(root: Path) -> dict:
    """The ``[tool.qg-audit]`` table of ROOT/pyproject.toml, or {} when absent."""
    pyproject = root / "pyproject.toml"
    return settings_in(pyproject) if pyproject.is_file() else {}


def settings_in(path: Path) -> dict:
    """The ``[tool.qg-audit]`` table of a pyproject-style TOML file ({} when it has none)."""
    tomllib = _tomllib()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot read [tool.qg-audit]: {exc}") from exc
    return data.get("tool", {}).get("qg-audit", {})


def _tomllib():
    # Imported when first needed: most scanned projects have no pyproject.toml at their root,
    # and the replay fast path would pay for it (with datetime) on every rescan.
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib


def __getattr__(name: str):
    """``from auditor.settings import tomllib`` (tomli below Python 3.11), imported lazily."""
    if name == "tomllib":
        return _tomllib()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
