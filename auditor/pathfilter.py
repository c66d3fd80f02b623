"""Which paths the scan walk skips: ``exclude`` globs and ``.gitignore`` files.

    keep = PathFilter(root, extend_exclude=["data/*"], respect_gitignore=True)
    keep.excluded("pkg/data/big.yaml", is_dir=False)   # -> True

Exclude globs follow ruff: a glob matches a path relative to the scanned root, or the last
component of it (``"*.ipynb"``, ``"generated"``), and a matched directory is not entered.

``.gitignore`` matching is git's, written with the standard library (the cases a real
project's ignore files use): ``#`` comments, ``\\`` escapes, ``!`` negation (last match
wins), a trailing ``/`` for directories only, a ``/`` at the start or in the middle to
anchor the pattern to its file's directory, ``*``/``?``/``[...]`` within one component and
``**`` across components. Every ``.gitignore`` from the repository top (the nearest
directory above the root holding ``.git``) down to the file's directory applies, deeper
ones taking precedence, plus ``.git/info/exclude``. As in git, a file inside an ignored
directory cannot be re-included (the walk never enters the directory). The scanned root
itself is never excluded: naming it is asking for it.

Git never ignores a file it tracks, and neither does this filter: an entry an ignore file
matches is asked about in the repository's index (auditor.gitindex, read once, when the
first such entry comes), and a tracked file, or a directory holding tracked files, is kept.
Inside such a directory only the tracked entries are kept. ``exclude`` globs are the
user's own choice and apply to tracked files too.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class IgnoreRule:
    regex: re.Pattern
    negate: bool
    dir_only: bool


def parse_gitignore(text: str) -> list[IgnoreRule]:
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        line = _strip_trailing_spaces(line)
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/") and not line.endswith("\\/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line  # a slash at the start or in the middle: relative to this file's dir
        line = line.lstrip("/")
        body = _translate(line)
        regex = re.compile(("" if anchored else r"(?:.*/)?") + body + r"\Z", re.DOTALL)
        rules.append(IgnoreRule(regex, negate, dir_only))
    return rules


def _strip_trailing_spaces(line: str) -> str:
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped + " "  # "foo\ " keeps its escaped space
    return stripped


def _translate(pattern: str) -> str:
    """A gitignore glob (no leading/trailing slash) as a regex over '/'-separated paths."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append(r"(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append(r"/.*")
            i += 3
        elif pattern.startswith("**", i) and i + 2 == n and (i == 0 or pattern[i - 1] == "/"):
            out.append(r".*")
            i += 2
        else:
            c = pattern[i]
            if c == "*":
                out.append(r"[^/]*")
            elif c == "?":
                out.append(r"[^/]")
            elif c == "\\" and i + 1 < n:
                i += 1
                out.append(re.escape(pattern[i]))
            elif c == "[":
                end = _class_end(pattern, i)
                if end < 0:
                    out.append(r"\[")
                else:
                    inner = pattern[i + 1:end]
                    neg = inner[:1] in ("!", "^")
                    inner = inner[1:] if neg else inner
                    inner = inner.replace("\\", "\\\\")
                    out.append(("[^/" if neg else "[") + inner + "]")
                    i = end
            else:
                out.append(re.escape(c))
            i += 1
    return "".join(out)


def _class_end(pattern: str, start: int) -> int:
    j = start + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    end = pattern.find("]", j)
    return end


def glob_matches(rel: str, pattern: str) -> bool:
    """An exclude glob against a root-relative path: the whole path, a prefix of it, or its name."""
    pattern = pattern.strip().rstrip("/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    name = rel.rsplit("/", 1)[-1]
    return fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(name, pattern) \
        or fnmatch.fnmatchcase(rel, pattern + "/*")


def _repo_top(root: Path) -> Path | None:
    for d in (root, *root.parents):
        if (d / ".git").exists():
            return d
    return None


class PathFilter:
    """Decides per walked entry; reads each directory's ``.gitignore`` once, when first needed."""

    def __init__(self, root: Path, exclude: list[str] | tuple[str, ...] = (), respect_gitignore: bool = True):
        self.root = Path(os.path.abspath(root))
        self.exclude = [p for p in exclude if p.strip()]
        self.respect_gitignore = respect_gitignore
        self._rules: dict[str, list[IgnoreRule]] = {}
        self._chains: dict[str, list] = {}
        self._index = None  # auditor.gitindex.GitIndex, read when an ignore rule first matches
        self._index_read = False
        self._kept: set[str] = set()  # ignored directories entered for the tracked files they hold
        top = _repo_top(self.root) if respect_gitignore else None
        self.top = top or self.root
        # root relative to the repository top ("" when the root is the top)
        self.prefix = "" if self.top == self.root else self.root.relative_to(self.top).as_posix()
        self._base: list[tuple[str, list[IgnoreRule]]] = []
        if respect_gitignore:
            info = self.top / ".git" / "info" / "exclude"
            if top is not None and info.is_file():
                self._base.append(("", parse_gitignore(_read(info))))
            # .gitignore files between the repository top and the root apply too
            parts = self.prefix.split("/") if self.prefix else []
            for depth in range(len(parts)):
                d = "/".join(parts[:depth])
                self._base.append((d, self._load(self.top / d if d else self.top)))

    def __bool__(self) -> bool:
        return bool(self.exclude or self.respect_gitignore)

    def excluded(self, rel: str, is_dir: bool) -> bool:
        if any(glob_matches(rel, p) for p in self.exclude):
            return True
        return self.respect_gitignore and self.ignored(rel, is_dir)

    def in_dir(self, rel_dir: str):
        """``excluded`` for the entries of ROOT/REL_DIR as a function of (name, is_dir), with
        the directory's share of the work done once; None when nothing in it can be excluded."""
        chain = self._chain(rel_dir) if self.respect_gitignore else []
        exclude = self.exclude
        head = f"{rel_dir}/" if rel_dir else ""
        full_dir = f"{self.prefix}/{head}" if self.prefix else head
        if rel_dir in self._kept:  # an ignored directory: only what git tracks in it
            def untracked(name: str, is_dir: bool) -> bool:
                if exclude and any(glob_matches(head + name, p) for p in exclude):
                    return True
                return not self._keep_tracked(head + name, full_dir + name, is_dir)

            return untracked
        if not self.exclude and not chain:
            return None
        # deepest ignore file first; each with its rules last first (the last match wins)
        layers = [(full_dir[len(base) + 1:] if base else full_dir, rules[::-1],
                   [r for r in rules[::-1] if not r.dir_only]) for base, rules in reversed(chain)]

        def excluded(name: str, is_dir: bool) -> bool:
            if exclude and any(glob_matches(head + name, p) for p in exclude):
                return True
            for sub_dir, every, for_files in layers:
                sub = sub_dir + name
                for rule in every if is_dir else for_files:
                    if rule.regex.match(sub):
                        return not rule.negate and not self._keep_tracked(head + name, full_dir + name, is_dir)
            return False

        return excluded

    def _keep_tracked(self, rel: str, rel_top: str, is_dir: bool) -> bool:
        """Is the ignored entry ROOT/REL (REL_TOP from the repository top) tracked by git, or a
        directory holding tracked files? Such a directory is then walked for those alone."""
        if not self._index_read:
            from auditor.gitindex import GitIndex

            self._index_read = True
            self._index = GitIndex.of(self.top) if (self.top / ".git").exists() else None
        if self._index is None:
            return False
        if not is_dir:
            return self._index.tracked(rel_top)
        if self._index.holds(rel_top):
            self._kept.add(rel)
            return True
        return False

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Git's verdict on ROOT/REL: the last matching pattern of the deepest file that has
        one, unless git tracks it (and, inside an ignored directory, whatever it does not track)."""
        parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
        full = f"{self.prefix}/{rel}" if self.prefix else rel
        if parent in self._kept:
            return not self._keep_tracked(rel, full, is_dir)
        chain = self._chain(parent)
        if not chain:
            return False
        for base, rules in reversed(chain):
            sub = full[len(base) + 1:] if base else full
            for rule in reversed(rules):
                if rule.dir_only and not is_dir:
                    continue
                if rule.regex.match(sub):
                    return not rule.negate and not self._keep_tracked(rel, full, is_dir)
        return False

    def _chain(self, rel_dir: str) -> list[tuple[str, list[IgnoreRule]]]:
        """The ignore files that apply in ROOT/REL_DIR, outermost first: (base relative to the
        repository top, rules), those without rules left out. Cached per directory."""
        chain = self._chains.get(rel_dir)
        if chain is None:
            if rel_dir:
                up = rel_dir.rsplit("/", 1)[0] if "/" in rel_dir else ""
                chain = list(self._chain(up))
            else:
                chain = [c for c in self._base if c[1]]
            rules = self._load(os.path.join(self.root, rel_dir) if rel_dir else self.root)
            if rules:
                base = f"{self.prefix}/{rel_dir}".strip("/") if self.prefix else rel_dir
                chain.append((base, rules))
            self._chains[rel_dir] = chain
        return chain

    def sources(self) -> list[str]:
        """Every ignore file this filter has read or looked for, present or not (the walk's
        memo re-checks them: auditor.walk.WalkMemo)."""
        paths = [os.path.join(d, ".gitignore") for d in self._rules]
        if self.respect_gitignore:
            paths.append(str(self.top / ".git" / "info" / "exclude"))
        if self._index is not None:
            paths.append(str(self._index.path))  # `git add -f` of an ignored file changes only the index
        return paths

    def _load(self, directory: Path | str) -> list[IgnoreRule]:
        key = str(directory)
        if key not in self._rules:
            path = os.path.join(key, ".gitignore")  # strings: this runs once per walked directory
            self._rules[key] = parse_gitignore(_read(Path(path))) if os.path.isfile(path) else []
        return self._rules[key]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
