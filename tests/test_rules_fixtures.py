"""Annotated fixture projects: `# expect: QG104` marks every line where a finding must be.

The test compares the exact set of (code, file, line) the real pipeline reports with the
annotations, so a missing finding and a false positive both fail.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from auditor.lint.harness import scan_and_check

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules"
EXPECT = re.compile(r"#\s*expect:\s*((?:QG\d{3}[\s,]*)+)")


def expected(root: Path) -> set[tuple[str, str, int]]:
    out = set()
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = EXPECT.search(line)
            if m:
                for code in re.findall(r"QG\d{3}", m.group(1)):
                    out.add((code, path.relative_to(root).as_posix(), n))
    return out


PROJECTS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_fixture_findings_match_annotations(project):
    want = expected(project)
    assert want, f"{project.name} has no '# expect:' annotations"
    result = scan_and_check(project)
    got = {(f.code, f.file, f.line) for f in result.findings}
    missing, extra = sorted(want - got), sorted(got - want)
    detail = {(f.code, f.file, f.line): f.message for f in result.findings}
    assert not missing and not extra, (
        f"missing: {missing}\nunexpected: {[(e, detail[e]) for e in extra]}")


def test_qg105_cites_the_config_nearest_the_call(tmp_path):
    """fairseq's examples/MMPT/mmpt_cli/predict.py beside an unrelated example's config that scans
    first: the finding cites MMPT's own config, the one a user of that script edits."""
    from auditor.lint.harness import findings_for

    files = {
        "examples/audio/configs/finetune.yaml": "dataset:\n  num_workers: 4\n",
        "examples/mmpt/projects/test.yaml": "dataset:\n  num_workers: 2\n",
        "examples/mmpt/cli/predict.py": "from torch.utils.data import DataLoader\n"
                                        "def main(config, ds):\n"
                                        "    bs = config.dataset.batch_size\n"
                                        "    return DataLoader(ds, batch_size=bs, num_workers=6)\n",
    }
    found = findings_for(files, tmp_path, "QG105")
    assert [f.line for f in found] == [4], [f.message for f in found]
    assert "configured at examples/mmpt/projects/test.yaml:2" in found[0].message, found[0].message


def test_qg101_names_the_handed_section_the_key_spells(tmp_path):
    """mmf: trainer.params goes to Lightning's Trainer and tokenizer_config.params to
    AutoTokenizer; the note on trainer.params.gpus names the first, not any section ending in
    `params`."""
    from auditor.lint.harness import findings_for

    files = {
        "configs/defaults.yaml": "tokenizer_config:\n  params:\n    do_lower_case: true\n"
                                 "trainer:\n  params:\n    gpus: 1\ntraining:\n  num_workers: 4\n",
        "trainers/lightning.py": "from pytorch_lightning import Trainer\nfrom transformers import AutoTokenizer\n"
                                 "from torch.utils.data import DataLoader\n"
                                 "def build(config, ds):\n"
                                 "    tok = AutoTokenizer.from_pretrained('bert', **config.tokenizer_config.params)\n"
                                 "    loader = DataLoader(ds, num_workers=config.training.num_workers)\n"
                                 "    return Trainer(**config.trainer.params), tok, loader\n",
    }
    found = [f for f in findings_for(files, tmp_path, "QG101") if f.line == 6]
    assert [f.severity for f in found] == ["note"], [f.message for f in found]
    assert "section `trainer.params` is handed to pytorch_lightning.Trainer" in found[0].message, found[0].message


def test_qg105_a_configurable_helper_fills_what_the_call_leaves_out(tmp_path):
    """detectron2's `@configurable(from_config=...)` loaders: `build_loader(cfg)` takes
    num_workers from cfg.DATALOADER.NUM_WORKERS, not from the parameter's default 0."""
    from auditor.lint.harness import findings_for

    loader = ("from torch.utils.data import DataLoader\n"
              "from detectron2.config import configurable\n"
              "def _from_config(cfg):\n"
              "    return {'num_workers': cfg.DATALOADER.NUM_WORKERS}\n"
              "{decorator}"
              "def build_loader(dataset=None, num_workers=0):\n"
              "    return DataLoader(dataset, num_workers=num_workers)\n")
    for decorator, expected in (("@configurable(from_config=_from_config)\n", []), ("", [3])):
        files = {"configs/base.yaml": "DATALOADER:\n  NUM_WORKERS: 4\n",
                 "data/build.py": loader.replace("{decorator}", decorator),
                 "tools/bench.py": "from data.build import build_loader\n"
                                   "def main(cfg):\n"
                                   "    return build_loader(cfg), cfg.DATALOADER.BATCH\n"}
        root = tmp_path / (decorator and "configurable" or "plain")
        found = [f.line for f in findings_for(files, root, "QG105") if f.file == "tools/bench.py"]
        assert found == expected, (decorator, found)
