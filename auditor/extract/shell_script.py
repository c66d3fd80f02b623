"""Shell launch scripts -> sites.

A launch script is where a run's parallelism is really chosen: Hydra overrides
(``actor.rollout.tensor_model_parallel_size=2``), argparse flags (``--num-workers 8``),
launcher flags (``torchrun --nproc_per_node 4``) and environment variables
(``OMP_NUM_THREADS=1``). The lexer (cfg_shell_lex) turns the file into commands of words
with positions; this module follows the commands in order, keeps the shell variables it
can resolve statically (``N=8``, ``N=${N:-8}``, arrays), and emits:

- ``define`` for each knob-named flag, override, launcher flag or variable, with the
  value resolved where possible (``detail["resolved_from"]`` names the variable);
- ``read`` for each use of a knob-named variable (``$NUM_WORKERS``) and for each variable
  that feeds a knob (``--num_workers $N``), via="shell-var".

Nothing after a ``#`` counts, and heredoc bodies are not commands.
``meta["shell_vars"] = {"defined": {VAR: line}, "used": {VAR: line}, "exported": {VAR: line},
"measured": [VAR], "reads": {VAR: [VAR]}, "launchers": {VAR: line}}`` (first lines; measured: only
ever set from a command's output, `$(...)`; reads: the variables a variable's values read,
`WORLD_SIZE=$((GPUS*NODES))`; launchers: variables holding a launcher command that starts several
ranks, `LAUNCH_SCRIPT="torchrun --nproc_per_node=$((TP * DP))"`, for the scripts that source
this one to run).
``meta["sources"]``: the scripts it sources (`source`, `.`), as written, expansions kept.
"""

from __future__ import annotations

import bisect
import re
import shlex
from dataclasses import dataclass
from typing import Any

from auditor.extract import FileResult
from auditor.extract.cfg_common import interpolations, is_generated, make_site, type_word
from auditor.extract.cfg_shell_lex import ASSIGN_START, SINGLE_QUOTED_DOLLAR, Word, lex
from auditor.extract.shell_shards import sharded_launches
from auditor.extract import tool_threads

KIND = "shell"
# $NAME, ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:=default}, ${#NAME}, ${NAME[@]}
EXPANSION = re.compile(
    r"\$(?:\{(?P<len>#)?(?P<bname>[A-Za-z_]\w*)(?P<index>\[[^]]*\])?"
    r"(?:(?P<op>:?[-=?+])(?P<arg>[^}]*)|:(?P<slice>[^}]*))?\}"
    r"|(?P<name>[A-Za-z_]\w*))"
)
ARITH_NAME = re.compile(r"\b([A-Za-z_]\w*)\b")
# an arithmetic command or for-loop header, not a `$((...))` expansion (resolved with its words),
# on one line: `((` in an awk program (`while ((getline line < f) > 0)`) must not reach a `))` lines on
ARITH_COMMAND = re.compile(r"(?<![$\w])\(\(([^\n]*?)\)\)")
QUOTED_HEREDOC = re.compile(r"<<-?[ \t]*(['\"])(?P<delim>\w+)\1.*?^[ \t]*(?P=delim)[ \t]*$", re.DOTALL | re.MULTILINE)
FLAG = re.compile(r"^(--?)([A-Za-z][\w.\-]*)(?:=(.*))?$", re.DOTALL)
OVERRIDE = re.compile(r"^(~|\+\+|\+)?([A-Za-z_][\w\-]*(?:[./][\w\-]+)*)(?:@([\w.\-]+))?(?:=(.*))?$", re.DOTALL)
NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
DECLARERS = {"export", "declare", "typeset", "local", "readonly"}
WRAPPERS = {"nohup", "exec", "time", "command", "builtin", "sudo", "nice", "stdbuf", "eval"}
RUNNERS = {"uv", "poetry", "pipenv", "pdm", "hatch", "rye"}  # "uv run python ..."
# options of `uv run` (and its like) that take a value as the next word
RUNNER_VALUE_OPTIONS = {"--extra", "--env-file", "--with", "--with-editable", "--with-requirements", "--python", "-p",
                        "--package", "--group", "--only-group", "--no-group", "--index", "--default-index",
                        "--index-url", "--extra-index-url", "--find-links", "-f", "--directory", "--project",
                        "--config-file", "--cache-dir", "--python-preference", "--link-mode", "--resolution",
                        "--prerelease", "--exclude-newer", "--index-strategy", "--keyring-provider", "--color",
                        "--refresh-package", "--reinstall-package", "--upgrade-package", "-P", "--no-binary-package",
                        "--no-build-package", "-e", "--env", "-C", "--chdir", "-E", "--extras"}
KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "function"}
# a config flag and the file it names (`--config x.yaml`, `--config-file=x.json`, `--cfg x.yml`)
CONFIG_FLAG = re.compile(r"--(?:config|cfg)(?:[_-](?:file|path))?")
CONFIG_FILE = re.compile(r"\.(?:ya?ml|json)\Z")
MAX_CONFIGS_HANDED = 20
# programs that run a script of their own argument: a config flag after it is that script's
INTERPRETERS = {"bash", "sh", "zsh", "ksh", "dash", "node", "java", "ruby", "perl", "Rscript", "julia", "make"}
NOT_LAUNCHES = {"echo", "printf", "grep", "egrep", "sed", "awk", "cat", "tee", "test", "[", "[[", "set",
                "shift", "cd", "pushd", "popd", "mkdir", "rm", "cp", "mv", "ls", "source", ".", "trap",
                "wait", "sleep", "kill", "return", "exit", "true", "false", "printenv", "unset", "alias",
                "getopts", "git", "wget", "curl", "pip", "conda", "rg", "find", "xargs", "head", "tail"}
# Well-known shell/system variables: never "used but not defined" by the script's author.
SYSTEM_VARS = {"HOME", "PWD", "OLDPWD", "PATH", "USER", "SHELL", "HOSTNAME", "RANDOM", "LINENO", "SECONDS",
               "BASH_SOURCE", "BASH_VERSION", "FUNCNAME", "IFS", "PPID", "UID", "EUID", "OSTYPE", "TMPDIR",
               "LANG", "TERM", "OPTARG", "OPTIND", "REPLY", "BASH", "PIPESTATUS", "HOSTTYPE"}
MAX_SOURCES = 20  # scripts sourced, per script
LAUNCHERS = {"torchrun": "torchrun", "deepspeed": "deepspeed", "srun": "srun", "mpirun": "mpirun",
             "mpiexec": "mpiexec", "ray": "ray", "sbatch": "sbatch"}
# A variable's value that is a launcher command given a rank count other than a literal 1
# (`"torchrun --nproc_per_node=$((TP * DP))"`, `"deepspeed --num_gpus 8"`), run where expanded
MULTI_RANK_LAUNCHER = re.compile(
    r"\s*(?:\S*/)?(?:torchrun|deepspeed|mpirun|mpiexec|python3?\s+-m\s+torch\.distributed\.(?:run|launch)"
    r"|accelerate\s+launch)\s.*?--?(?:nproc[-_]per[-_]node|num[-_]gpus|num[-_]processes|np|n)[=\s]+(?!1\b)\S")
# Launcher options that take no value (everything else with a following plain word takes it).
LAUNCHER_BOOLEANS = {"standalone", "no_python", "module", "m", "run_path", "multi_gpu", "cpu", "use_deepspeed",
                     "use_fsdp", "use_megatron_lm", "use_xpu", "same_network", "tpu", "debug", "quiet", "q",
                     "no_local_rank", "force_multi", "autotune", "block", "head", "no_wait", "verbose", "v"}
# Launcher flags that are parallelism settings even when the vocabulary lacks their name.
LAUNCHER_KNOBS = {"nproc_per_node", "nnodes", "num_processes", "num_machines", "num_gpus", "num_nodes", "np",
                  "ntasks", "ntasks_per_node", "nodes", "gpus_per_node", "cpus_per_task", "num_cpus", "gpus"}


@dataclass
class Var:
    value: str | None  # None: not statically known
    line: int
    env_default: bool = False  # the value is a ${VAR:-default} fallback
    resolved_from: str | None = None
    elements: list[tuple[Word, "Resolved"]] | None = None  # arrays, resolved where defined
    conditional: bool = False  # last set inside if / case / a loop
    # an unknown value of several words, as written (`ARGS="--nnodes $NNODES --master_port
    # $(($RANDOM + 1024))"`): split where it is expanded, each word resolved there
    words: str | None = None


@dataclass
class Resolved:
    text: str | None
    refs: list[str]
    env_default: bool = False
    defaults: dict | None = None  # NAME -> the text of its ${NAME:-default}
    conditional: bool = False  # a variable it used was set under a condition


# after an assignment, a comment that holds the expansion it replaced (`#$((A * B))`, `# ${NGPU}`)
COMMENTED_COUNT = re.compile(r"[ \t]+#[ \t]*(\$(?:\(\(|\{)?[A-Za-z_][^#\n]*)$")


class _Script:
    def __init__(self, text: str, path: str, vocab):
        self.text, self.path, self.vocab = text, path, vocab
        self.lines = text.split("\n")
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.vars: dict[str, Var] = {}
        self.defined: dict[str, int] = {}
        self.used: dict[str, int] = {}
        self.result = FileResult()
        self.generated = is_generated(path, text)
        self.read_at: set[tuple] = set()
        self.exported: dict[str, int] = {}  # export / VAR=v cmd: handed to the programs started
        self.measured: set[str] = set()  # VAR=$(nvidia-smi -L | wc -l): a program's output
        self.launches: list[list] = []  # [line, launcher] for each launcher started
        self.tool_counts: list[dict] = []  # literal counts given to programs' own pools (QG105)
        self.sources: list[str] = []  # the scripts it sources, as written
        self.configs_handed: list[dict] = []  # `sweagent run-batch --config agent/infer.yaml`
        self.reads: dict[str, list[str]] = {}  # WORLD_SIZE=$((GPUS_PER_NODE*NNODES)): the names its value reads
        self.typed: set[str] = set()  # assigned a value written in the script, at least once
        self.launcher_vars: dict[str, int] = {}  # LAUNCH="torchrun --nproc_per_node=8": line
        self.depth = 0  # inside if / case / loops: an assignment there may not run

    # -- positions and sites ------------------------------------------------------------
    def pos(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def site(self, role: str, word: Word, key: str, match: str, value: Any = None, default: Any = None,
             **detail: Any) -> None:
        line, col = self.pos(word.offset)
        detail["match"] = match
        if self.generated:
            detail["generated"] = True
        self.result.sites.append(make_site(role, self.path, line, col, key, KIND, self.lines,
                                           value=value, default=default, **detail))

    # -- variables ------------------------------------------------------------------------
    def resolve(self, text: str) -> Resolved:
        """Substitute the variables this script knows; None when any part is unknown."""
        refs: list[str] = []
        defaults: dict[str, str] = {}
        conditional = False
        unknown = False
        env_default = False

        def sub(m: re.Match) -> str:
            nonlocal unknown, env_default, conditional
            name = m.group("bname") or m.group("name")
            refs.append(name)
            # names an index or a slice reads (`${nodes[$i]}`, `${nodes[@]:first:count}`: arithmetic)
            for part in (m.group("index") or "", m.group("slice") or ""):
                refs.extend(n for n in ARITH_NAME.findall(part) if not n.isdigit())
            if m.group("slice") is not None:
                unknown = True
                return ""
            var = self.vars.get(name)
            if m.group("len") or m.group("index") is not None and var is not None and var.elements is not None:
                unknown = True
                return ""
            op, arg = m.group("op"), m.group("arg")
            if op in (":-", "-", ":=", "="):
                defaults.setdefault(name, arg)
            if var is not None and var.value is not None and not (op and op.endswith("+")):
                env_default = env_default or var.env_default
                conditional = conditional or var.conditional
                return var.value
            if op in (":-", "-", ":=", "=") and var is None:
                inner = self.resolve(arg)
                refs.extend(inner.refs)
                if inner.text is None:
                    unknown = True
                    return ""
                env_default = True
                return inner.text
            unknown = True
            return ""

        if "$(" in text or "`" in text:
            unknown = True
            # a heredoc with a quoted delimiter inside a substitution (`BODY=$(cat <<'EOF' ...`) is
            # text for another script: nothing in it expands here
            text = QUOTED_HEREDOC.sub("", text)
            for inner in re.finditer(r"\$\(\((.*?)\)\)", text, re.DOTALL):
                refs.extend(n for n in ARITH_NAME.findall(inner.group(1)) if not n.isdigit())
        out = EXPANSION.sub(sub, text)
        if re.search(r"\$[0-9@*#?$!-]", out):
            unknown = True
        out = out.replace(SINGLE_QUOTED_DOLLAR, "$")
        return Resolved(None if unknown else out, refs, env_default, defaults, conditional)

    def note_uses(self, word: Word, refs: list[str], feeds: str | None = None,
                  defaults: dict | None = None) -> None:
        line, _ = self.pos(word.offset)
        for name in refs:
            if name in SYSTEM_VARS:
                continue
            self.used.setdefault(name, line)
            match = self.vocab.match(name)
            if match and (word.offset, name) not in self.read_at:
                self.read_at.add((word.offset, name))
                var = self.vars.get(name)
                detail: dict[str, Any] = {"via": "shell-var"}
                if feeds:
                    detail["feeds"] = feeds
                if var is None:
                    detail["env"] = True  # not set by this script: comes from the environment
                line_, col = self.pos(word.offset)
                self.result.sites.append(make_site(
                    "read", self.path, line_, col, name, KIND, self.lines,
                    value=type_word(var.value) if var and var.value is not None else None,
                    default=self.default_of(name, defaults),
                    **detail, match=match,
                    **({"generated": True} if self.generated else {})))

    def default_of(self, name: str, defaults: dict | None) -> Any:
        if not defaults or name not in defaults:
            return None
        text = self.resolve(defaults[name]).text
        return None if text is None else type_word(text)

    def assign(self, word: Word, via: str, persistent: bool = True, command: str = "") -> None:
        m = ASSIGN_START.match(word.raw)
        name, append = m.group(1), m.group(2)
        line, column = self.pos(word.offset)
        self.defined.setdefault(name, line)
        if via in ("export", "env-prefix"):
            self.exported.setdefault(name, line)
        if word.is_array:
            old = self.vars.get(name)
            elements = (old.elements or [] if append and old else [])
            for el in word.elements:
                res = self.resolve(el.text)
                self.note_uses(el, res.refs)
                elements.append((el, res))
            self.vars[name] = Var(None, line, elements=elements)
            return
        value_text = word.text[len(name) + len(append) + 1 :]
        if MULTI_RANK_LAUNCHER.match(value_text):
            self.launcher_vars.setdefault(name, line)
        substituted = value_text.startswith(("$(", "`")) and not value_text.startswith("$((")
        (self.measured if substituted else self.typed).add(name)
        res = self.resolve(value_text)
        self_ref = name in res.refs and name not in self.vars
        reads = self.reads.setdefault(name, [])
        for ref in res.refs:
            if ref != name and ref not in SYSTEM_VARS and ref not in reads:
                reads.append(ref)
        match = self.vocab.match(name)
        self.note_uses(word, [r for r in res.refs if r != name or name in self.vars],
                       feeds=name if match else None, defaults=res.defaults)
        value = res.text
        old = self.vars.get(name)
        if append and value is not None:
            value = None if old is None or old.value is None else old.value + value
        if value is None and self.depth and old is not None and old.value is not None:
            persistent = False  # a conditional unknown (case ... NPROC=$2) keeps the known value
        single_ref = res.refs[0] if len(set(res.refs)) == 1 else None
        var = Var(value, line, res.env_default, single_ref if single_ref != name else None,
                  conditional=bool(self.depth) or res.conditional,
                  words=value_text if value is None and not substituted and not append
                  and re.search(r"\s", value_text.strip()) else None)
        if persistent:
            self.vars[name] = var
        if match:
            detail: dict[str, Any] = {"via": via}
            if res.refs:
                detail["reference"] = res.refs[0]
            if var.resolved_from:
                detail["resolved_from"] = var.resolved_from
            if res.env_default:
                detail["env_default"] = True
            if self.depth:
                detail["conditional"] = True
            if command:
                detail["command"] = command  # `OMP_NUM_THREADS=1 \<newline> xvfb-run pytest`: what it is set for
            if value_text.isdigit():
                # NUM_PROCESSES=1 #$((NUM_GPUS_PER_NODE * NUM_NODES)): the computed count, commented out
                was = COMMENTED_COUNT.match(self.lines[line - 1][column - 1 + len(word.raw):])
                if was:
                    detail["commented_out"] = was.group(1).strip()[:120]
            self.site("define", word, name, match, value=None if value is None else type_word(value), **detail)
            if self_ref:  # NAME=${NAME:-8}: reads NAME from the environment, default 8
                default = re.search(r"\$\{" + name + r":?[-=]([^}]*)\}", value_text)
                line_, col = self.pos(word.offset)
                self.result.sites.append(make_site(
                    "read", self.path, line_, col, name, KIND, self.lines, value=None,
                    default=type_word(self.resolve(default.group(1)).text or "") if default else None,
                    via="shell-var", env=True, match=match, **({"generated": True} if self.generated else {})))

    # -- commands ---------------------------------------------------------------------------
    def command(self, words: list[Word]) -> None:
        while words and words[0].text in KEYWORDS | {"case", "esac", "for"} and not words[0].quoted:
            kw = words[0].text
            self.depth += (kw in ("if", "while", "until", "case", "for")) - (kw in ("fi", "done", "esac"))
            self.depth = max(self.depth, 0)
            if kw in ("case", "for"):
                break
            words = words[1:]
        if not words:
            return
        head = words[0].text
        if head == "for" and len(words) > 1:
            line, _ = self.pos(words[1].offset)
            self.defined.setdefault(words[1].text, line)
            self.vars[words[1].text] = Var(None, line)
            for w in words[2:]:
                self.note_uses(w, self.resolve(w.text).refs)
            return
        if head in ("read", "getopts"):
            for w in words[1:]:
                if re.fullmatch(r"[A-Za-z_]\w*", w.text):
                    line, _ = self.pos(w.offset)
                    self.defined.setdefault(w.text, line)
                    self.vars[w.text] = Var(None, line)
            return
        if head == "unset":
            for w in words[1:]:
                self.vars.pop(w.text, None)
            return
        if head in ("source", ".") and len(words) > 1 and len(self.sources) < MAX_SOURCES:
            # as written, expansions kept (``. `pwd`/SBATCH.sh``): the script it names reads this
            # script's variables (rules/qg108 resolves it against the scanned files)
            self.sources.append(words[1].text if "$" not in words[1].raw and "`" not in words[1].raw
                                else words[1].raw.strip("\"'"))
        if head in DECLARERS:
            for w in words[1:]:
                if ASSIGN_START.match(w.raw):
                    self.assign(w, "export" if head == "export" else head)
                elif not w.text.startswith("-"):
                    self.note_uses(w, self.resolve(w.text).refs)
                    if head == "export" and re.fullmatch(r"[A-Za-z_]\w*", w.text):
                        self.exported.setdefault(w.text, self.pos(w.offset)[0])
            return
        prefix = []
        while words and ASSIGN_START.match(words[0].raw):
            prefix.append(words.pop(0))
        command = " ".join(w.text for w in words[:8])[:200]
        for w in prefix:
            self.assign(w, "assignment" if not words else "env-prefix", persistent=not words, command=command)
        if words:
            self.tool_threads(words)
            self.invocation(self.expand(words))

    def tool_threads(self, words: list[Word]) -> None:
        """`parallel -j 4 ...`, `./main -m model.gguf -t 8`: a literal count given to a program's
        own pool (rules/commands.yaml), kept for QG105."""
        if len(self.tool_counts) >= tool_threads.MAX_FACTS or not tool_threads.mentions(" ".join(w.text for w in words)):
            return
        items = [("expr" if "$" in w.raw or "`" in w.raw else "lit", w.text, self.pos(w.offset)[0]) for w in words]
        self.tool_counts.extend({**fact, "col": 1} for fact in tool_threads.counts(items, known_only=True))

    def expand(self, words: list[Word]) -> list[tuple[Word, Word, dict]]:
        """(word as the program sees it, word whose position is reported, extra detail)."""
        out = []
        for w in words:
            m = re.fullmatch(r"\$\{(\w+)\[[@*]\]\}|\$(\w+)|\$\{(\w+)\}", w.text)
            name = m and (m.group(1) or m.group(2) or m.group(3))
            var = self.vars.get(name) if name else None
            if var is not None and var.elements is not None:
                line, _ = self.pos(w.offset)
                self.note_uses(w, [name])
                for el, res in var.elements:
                    text = el.text if res.text is None else res.text
                    out.append((Word(text, el.raw, el.offset, el.quoted), el,
                                {"via_array": name, "expanded_at": line, "_refs": res.refs}))
                continue
            text = (var.value or var.words) if var is not None else None
            if var is not None and var.value == "" and not var.words and not w.quoted and w.text == w.raw:
                # `$VENV_PREFIX python -m torch.distributed.run ...` with VENV_PREFIX="": an unquoted
                # empty expansion is no word, so the command is the one after it
                self.note_uses(w, [name])
                continue
            if text and not w.quoted and re.search(r"\s", text.strip()):
                self.note_uses(w, [name])
                try:
                    parts = shlex.split(text)
                except ValueError:
                    parts = text.split()
                for part in parts:
                    out.append((Word(part, w.raw, w.offset), w, {"split_from": name, "_refs": []}))
                continue
            out.append((w, w, {"_refs": None}))
        return out

    def invocation(self, words: list[tuple[Word, Word, dict]], launcher: str | None = None) -> None:
        while words:
            name = words[0][0].text.rsplit("/", 1)[-1]
            if name in WRAPPERS:
                words = words[1:]
            elif name in RUNNERS and len(words) > 1 and words[1][0].text == "run":
                words = words[2:]
                while words and words[0][0].text.startswith("-"):
                    option = words[0][0].text
                    if option in ("-m", "--module") and len(words) > 1:
                        # `uv run -m pkg.train`: python -m, the module is the program
                        python = Word("python", words[0][0].raw, words[0][0].offset)
                        words = [(python, words[0][1], {"_refs": None}), (Word("-m", option, words[0][0].offset),
                                                                          *words[0][1:]), *words[1:]]
                        break
                    # `--extra verl`, `--env-file .env`: the option's value is no program
                    words = words[2:] if option in RUNNER_VALUE_OPTIONS else words[1:]
            elif name == "env":
                words = words[1:]
                while words and (words[0][0].text.startswith("-") or ASSIGN_START.match(words[0][0].raw)):
                    if ASSIGN_START.match(words[0][0].raw):
                        self.assign(words[0][0], "env-prefix", persistent=False)
                    words = words[1:]
            else:
                break
        if not words:
            return
        head = words[0][0].text
        name = head.rsplit("/", 1)[-1]
        self.note_word(words[0])
        rest = words[1:]
        if name in NOT_LAUNCHES:
            for item in rest:
                self.note_word(item)
            return
        if re.fullmatch(r"python[\d.]*", name):
            i = 0
            while i < len(rest) and rest[i][0].text.startswith("-") and rest[i][0].text != "-m":
                if rest[i][0].text == "-c":
                    for item in rest:
                        self.note_word(item)
                    return
                i += 2 if rest[i][0].text in ("-X", "-W") else 1
            for item in rest[:i]:
                self.note_word(item)
            rest = rest[i:]
            if len(rest) >= 2 and rest[0][0].text == "-m" and rest[1][0].text in (
                    "torch.distributed.run", "torch.distributed.launch"):
                self.note_word(rest[0])
                self.note_word(rest[1])
                return self.launcher(rest[2:], rest[1][0].text, launcher)
            if len(rest) >= 2 and rest[0][0].text == "-m":
                self.note_word(rest[0])
                self.note_word(rest[1])
                return self.program(rest[2:], launcher, script=rest[1][0].text)
            if rest:
                self.note_word(rest[0])
            return self.program(rest[1:], launcher, script=rest[0][0].text if rest else None)
        if name == "accelerate" and rest and rest[0][0].text == "launch":
            self.note_word(rest[0])
            return self.launcher(rest[1:], "accelerate launch", launcher)
        if name in LAUNCHERS:
            return self.launcher(rest, LAUNCHERS[name], launcher)
        if "/" not in head and "." not in name and launcher is None and name not in INTERPRETERS:
            self.config_handed(name, rest)
        self.program(rest, launcher, script=head)

    def config_handed(self, program: str, words) -> None:
        """A config file given to another program by a config flag (`sweagent run-batch --config
        agent/swesmith_infer.yaml`): that program reads its keys, out of the scanned tree."""
        texts = [w[0].text for w in words]
        for i, text in enumerate(texts):
            flag, _, value = text.partition("=")
            if not CONFIG_FLAG.fullmatch(flag):
                continue
            value = value or (texts[i + 1] if i + 1 < len(texts) else "")
            if CONFIG_FILE.search(value) and "$" not in value and len(self.configs_handed) < MAX_CONFIGS_HANDED:
                self.configs_handed.append({"path": value, "program": program,
                                            "line": self.pos(words[i][0].offset)[0]})

    def launcher(self, words, name: str, outer: str | None) -> None:
        """Options of a launcher, then the program it starts."""
        i = 0
        # the line the options start on: one command, however many lines `\` continues it over
        command_line = self.pos(words[0][0].offset)[0] if words else None
        if command_line is not None:
            self.launches.append([command_line, name])
        while i < len(words):
            word, at, extra = words[i]
            text = word.text
            if text == "--":
                self.note_word(words[i])
                return self.invocation(words[i + 1 :], name)
            m = FLAG.match(text)
            if not m:
                if name in ("ray", "sbatch") and i == 0:  # "ray start ...", "ray job submit ..."
                    self.note_word(words[i])
                    i += 1
                    continue
                break
            dest = m.group(2).replace("-", "_")
            value_item = None
            if m.group(3) is None and dest not in LAUNCHER_BOOLEANS and self.takes(words, i + 1):
                if not words[i + 1][0].text.endswith(".py"):
                    value_item = words[i + 1]
            self.flag(words[i], m, value_item, launcher=name, knob_always=dest in LAUNCHER_KNOBS,
                      command_line=command_line)
            i += 2 if value_item is not None else 1
        rest = words[i:]
        if not rest:
            return
        if name in ("srun", "mpirun", "mpiexec", "sbatch", "ray"):
            return self.invocation(rest, name)
        script = rest[0][0].text
        self.note_word(rest[0])
        self.program(rest[1:], name, script=script)

    def program(self, words, launcher: str | None, script: str | None) -> None:
        """The program's own arguments: argparse flags and Hydra overrides."""
        i = 0
        while i < len(words):
            text = words[i][0].text
            if text == "--" and i + 1 < len(words) and _starts_a_command(words[i + 1][0].text):
                # `mason.py --gpus 8 -- torchrun --nnodes=2 dpo.py ...`: a wrapper's command to run
                self.note_word(words[i])
                return self.invocation(words[i + 1:], launcher)
            m = FLAG.match(text) if text.startswith("-") and not NUMBER.match(text) else None
            if m:
                value_item = words[i + 1] if m.group(3) is None and self.takes(words, i + 1) else None
                if m.group(1) == "--":
                    self.flag(words[i], m, value_item, launcher=None, outer=launcher, script=script)
                else:  # short options (-n 8) are never knobs: just note variable uses
                    self.note_word(words[i])
                    if value_item is not None:
                        self.note_word(value_item)
                i += 2 if value_item is not None else 1
                continue
            o = OVERRIDE.match(text)
            if o and o.group(2).isupper() and i and words[i - 1][0].text.startswith("-"):
                self.note_word(words[i])  # `--env OMP_NUM_THREADS=8`: an option's NAME=VALUE, not a config key
            elif o and o.group(2).isupper() and o.group(4) is not None and any(c.isspace() for c in o.group(4)):
                # `screen -X stuff "CUDA_VISIBLE_DEVICES=0 python3 -m worker ..."`: a command line
                # handed to another program as one string, not an override of a key
                self.note_word(words[i])
            elif o and (o.group(4) is not None or o.group(1) == "~"):
                self.override(words[i], o, launcher, script)
            else:
                self.note_word(words[i])
            i += 1

    @staticmethod
    def takes(words, j: int) -> bool:
        """Whether words[j] is the value of the option before it (a guess, as argparse's)."""
        if j >= len(words):
            return False
        nxt = words[j][0].text
        if nxt.startswith("-") and not NUMBER.match(nxt):
            return False
        return not (OVERRIDE.match(nxt) and "=" in nxt and not nxt.startswith("="))

    def note_word(self, item, feeds: str | None = None) -> list[str]:
        word, at, extra = item
        res = self.resolve(word.text)
        refs = extra["_refs"] if extra.get("_refs") is not None else res.refs
        if extra.get("via_array") or extra.get("split_from"):
            return refs  # uses were noted where the array / variable was defined
        self.note_uses(at, refs, feeds=feeds, defaults=res.defaults)
        return refs

    def value_detail(self, item, feeds: str, match: str) -> tuple[Any, dict]:
        word, at, extra = item
        res = self.resolve(word.text)
        refs = self.note_word(item, feeds=feeds)
        detail = {k: v for k, v in extra.items() if not k.startswith("_")}
        if refs:
            detail["reference"] = refs[0]
            if len(set(refs)) == 1:
                detail["resolved_from"] = refs[0]
        if res.env_default:
            detail["env_default"] = True
        if res.conditional:
            detail["conditional"] = True
        return (None if res.text is None else type_word(res.text)), detail

    def flag(self, item, m: re.Match, value_item, launcher: str | None, knob_always: bool = False,
             outer: str | None = None, script: str | None = None, command_line: int | None = None) -> None:
        dest = m.group(2).replace("-", "_")
        match = self.vocab.match(dest.rsplit(".", 1)[-1]) or ("exact" if knob_always else None)
        if not match:
            self.note_word(item)
            if value_item is not None:
                self.note_word(value_item)
            return
        word, at, extra = item
        if m.group(3) is not None:
            inline = (Word(m.group(3), word.raw, word.offset, word.quoted), at, extra)
            value, detail = self.value_detail(inline, dest, match)
        elif value_item is not None:
            value, detail = self.value_detail(value_item, dest, match)
        else:
            value, detail = True, {"valueless": True}
            detail.update({k: v for k, v in extra.items() if not k.startswith("_")})
        detail.update(via="flag", flag=f"{m.group(1)}{m.group(2)}")
        if launcher or outer:
            detail["launcher"] = launcher or outer
        if launcher:  # the launcher's own option (--nproc_per_node), not an argument of the program it starts
            detail["launcher_option"] = True
            if command_line is not None:  # its options may be continued over several lines (`\`)
                detail["command_line"] = command_line
        if launcher is None and script:
            detail["script"] = script
        self.site("define", at, dest, match, value=value, **detail)

    def override(self, item, o: re.Match, launcher: str | None, script: str | None) -> None:
        prefix, key, package, raw_value = o.groups()
        key = key.replace("/", ".")
        match = self.vocab.match(key.rsplit(".", 1)[-1])
        if not match:
            self.note_word(item)
            return
        word, at, extra = item
        if raw_value is not None:
            value, detail = self.value_detail((Word(raw_value, word.raw, word.offset, word.quoted), at, extra),
                                              key, match)
        else:
            value, detail = None, {k: v for k, v in extra.items() if not k.startswith("_")}
        if isinstance(value, str) and "${" in value:  # a Hydra interpolation: Hydra resolves it
            refs = interpolations(value)
            detail["interpolation"] = value
            if refs:
                detail["reference"] = refs[0]["reference"]
                if refs[0]["env"]:
                    detail["env"] = True
            value = None
        detail["via"] = "hydra-override"
        if prefix in ("+", "++"):
            detail["hydra_add"] = prefix
        elif prefix == "~":
            detail["hydra_delete"] = True
        if package:
            detail["package"] = package
        if launcher:
            detail["launcher"] = launcher
        if script:
            detail["script"] = script
        self.site("define", at, key, match, value=value, **detail)

    def run(self) -> FileResult:
        lexed = lex(self.text)
        for words in lexed.commands:
            self.command(list(words))
        for doc in lexed.heredocs:
            if doc.expands:
                line, _ = self.pos(doc.offset)
                for m in EXPANSION.finditer(doc.body):
                    name = m.group("bname") or m.group("name")
                    if name not in SYSTEM_VARS:
                        self.used.setdefault(name, line + doc.body.count("\n", 0, m.start()))
        for m in ARITH_COMMAND.finditer(self.text):
            # `for ((i = 1; i <= WORKER_COUNT; i++))`, `(( n > 1 ))`: names without a `$` are read
            line, _ = self.pos(m.start())
            for name in ARITH_NAME.findall(m.group(1)):
                if not name.isdigit() and name not in SYSTEM_VARS:
                    self.used.setdefault(name, line)
        self.result.meta["shell_vars"] = {"defined": self.defined, "used": self.used, "exported": self.exported}
        if self.measured - self.typed:
            self.result.meta["shell_vars"]["measured"] = sorted(self.measured - self.typed)
        reads = {name: refs for name, refs in self.reads.items() if refs}
        if reads:
            self.result.meta["shell_vars"]["reads"] = reads
        if self.launcher_vars:
            self.result.meta["shell_vars"]["launchers"] = self.launcher_vars
        sharded = sharded_launches(lexed.commands, lambda offset: self.pos(offset)[0], self.defined)
        if sharded:
            self.result.meta["sharded_launches"] = sharded
        if self.launches:
            self.result.meta["launches"] = self.launches
        if self.sources:
            self.result.meta["sources"] = self.sources
        if self.configs_handed:
            self.result.meta["configs_handed"] = self.configs_handed
        sbatch = _sbatch_nodes(self.text)
        if sbatch is not None:
            self.result.meta["sbatch_nodes"] = sbatch
        if self.generated:
            self.result.meta["generated"] = True
        if self.tool_counts:
            self.result.meta["tool_threads"] = self.tool_counts
        return self.result


_SBATCH_NODES = re.compile(r"^#SBATCH[ \t]+(?:--nodes[= \t]+|-N[ \t]*)(\d+)(?:-\d+)?[ \t]*(?:#.*)?$", re.MULTILINE)


def _sbatch_nodes(text: str) -> list | None:
    """[line, count] of a `#SBATCH --nodes=2` (or `-N 2`) directive: the nodes the batch job gets."""
    m = _SBATCH_NODES.search(text) if "#SBATCH" in text else None
    return [text.count("\n", 0, m.start()) + 1, int(m.group(1))] if m else None


def _starts_a_command(word: str) -> bool:
    """After a wrapper's `--`: a launcher, an interpreter or a script, not one more argument."""
    name = word.rsplit("/", 1)[-1]
    return (name in LAUNCHERS or name in ("accelerate", "uv", "bash", "sh", "env") or re.fullmatch(r"python[\d.]*", name)
            is not None or name.endswith((".py", ".sh")) or ASSIGN_START.match(word) is not None)


def extract(text: str, path: str, vocab) -> FileResult:
    # CRLF scripts: drop the '\r' so it does not end up inside the last word of each line
    return _Script(text.replace("\r\n", "\n"), path, vocab).run()
