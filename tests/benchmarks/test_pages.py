"""The benchmark pages are generated from the stored results files (benchmarks/make_pages.py).

Fast: no benchmark runs; the generator reads ``benchmarks/results/*.json`` and builds the pages
in memory (or in a temporary folder).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
RESULTS = BENCHMARKS / "results"
sys.path.insert(0, str(BENCHMARKS))

import make_pages  # noqa: E402
from harness.machine import REQUIRED as MACHINE_KEYS  # noqa: E402
from harness.results import problems  # noqa: E402

STUDIES = sorted(path.stem for path in RESULTS.glob("*.json"))


def test_there_are_stored_results():
    assert len(STUDIES) >= 10


@pytest.mark.parametrize("study", STUDIES)
def test_each_results_file_has_its_command_and_machine_header(study):
    doc = json.loads((RESULTS / f"{study}.json").read_text(encoding="utf-8"))
    assert problems(doc) == []
    commands = [doc["command"]] if isinstance(doc["command"], str) else doc["command"]
    assert commands and all(command.strip() for command in commands)
    assert all(doc["machine"].get(key) not in (None, "", {}) for key in MACHINE_KEYS)
    assert doc["study"] == study and doc["tables"]


def test_every_results_file_becomes_a_page(tmp_path):
    files = make_pages.build(RESULTS, tmp_path, readme=None)
    assert sorted(p.stem for p in files if p.name != "index.md") == STUDIES
    index = files[tmp_path / "index.md"]
    for study in STUDIES:
        assert f"]({study}.md)" in index  # listed with its conclusion and command
        assert f"\n{study}\n" in index  # and in the toctree
        page = files[tmp_path / f"{study}.md"]
        assert "**Command:**" in page and "**Machine:**" in page and "\n| " in page
    current = index.index("## Current")
    assert all(index.index(f"]({s}.md)") > current for s in STUDIES)


def test_the_committed_pages_are_up_to_date():
    files = make_pages.build()
    assert make_pages.stale(make_pages.PAGES, files) == [], (
        "run `python benchmarks/make_pages.py` and commit docs/benchmarks/ and "
        "benchmarks/README.md")


def _copy(tmp_path: Path, edit) -> Path:
    results = tmp_path / "results"
    results.mkdir()
    for path in RESULTS.glob("*.json"):
        shutil.copy(path, results)
    victim = results / f"{STUDIES[0]}.json"
    doc = json.loads(victim.read_text(encoding="utf-8"))
    edit(doc)
    victim.write_text(json.dumps(doc), encoding="utf-8")
    return results


@pytest.mark.parametrize("edit", [
    lambda doc: doc.pop("command"),
    lambda doc: doc.update(command=""),
    lambda doc: doc.update(command=[]),
    lambda doc: doc.pop("machine"),
    lambda doc: doc["machine"].pop("cpu"),
    lambda doc: doc["machine"].update(date=""),
    lambda doc: doc.update(tables=[]),
], ids=["no command", "empty command", "no commands", "no machine", "machine without cpu",
        "machine without date", "no tables"])
def test_a_results_file_without_its_command_or_machine_header_fails(tmp_path, edit):
    results = _copy(tmp_path, edit)
    with pytest.raises(make_pages.InvalidResults, match=STUDIES[0]):
        make_pages.build(results, tmp_path / "pages", readme=None)
    assert make_pages.main(["--results-dir", str(results), "--pages-dir",
                            str(tmp_path / "pages")]) == 2
    assert not (tmp_path / "pages").exists()  # nothing written
