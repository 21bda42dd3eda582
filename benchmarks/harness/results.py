"""A study run and its results file, ``benchmarks/results/<study>.json``.

A study script defines a :class:`Study` (what it measures and its current one-line
conclusion), opens a :class:`Run` with its parsed arguments, adds tables as it measures, and
saves. The file holds::

    schema, study, title, script, status, measures, conclusion, chooses,
    command       the command(s) that produced the tables (a string, or a list),
    parameters    the run's arguments,
    machine       the machine header (harness.machine.machine_header),
    provenance    "measured ..." or, for numbers transcribed from an older page, where from,
    tables        [{key, title, columns, rows, notes?, command?, machine?, provenance?}],
    notes, skipped, raw (optional: the raw scores an analysis reads again)

Rows are lists of cell strings, as the page shows them. A table that carries its own
``command``/``machine``/``provenance`` came from another run than the file's (a study measured
in parts, e.g. one task at a time: :meth:`Run.save` keeps the tables of the other parts).
``benchmarks/make_pages.py`` turns every file into a page; :func:`problems` is what it checks.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from . import machine as _machine
from .tables import markdown_table

SCHEMA = 1
BENCHMARKS = Path(__file__).resolve().parents[1]
RESULTS_DIR = BENCHMARKS / "results"
#: Keys every results file has (see the module docstring).
REQUIRED = ("study", "title", "script", "status", "measures", "conclusion", "command",
            "machine", "provenance", "tables")
#: ``status``: what the study's numbers are about, in the order the index lists them.
STATUSES = ("current", "not shipped")


@dataclass(frozen=True)
class Study:
    """What a script measures, as its page and the index describe it.

    ``conclusion`` is the study's current one-line conclusion: whoever re-runs the study and
    reads a different result updates it here (the page shows the stored one). ``chooses``
    names the shipped constants or rules this study chose (``benchmarks/README.md`` maps them).
    """

    name: str
    title: str
    script: str
    measures: str
    conclusion: str
    status: str = "current"
    chooses: tuple[str, ...] = field(default_factory=tuple)


def jsonable(value):
    """``value`` with paths, tuples and non-finite floats made JSON-safe."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    try:  # numpy scalars
        return jsonable(value.item())
    except AttributeError:
        return repr(value)


class Run:
    """One run of a study: its command, machine and the tables it prints and stores."""

    def __init__(self, study: Study, args=None, *, results: str | Path | None = None,
                 command: str | None = None) -> None:
        self.study = study
        params = dict(vars(args)) if args is not None and hasattr(args, "__dict__") else {}
        params.pop("results", None)
        self.parameters = jsonable(params)
        self.command = command or _machine.command_line()
        self.machine = _machine.machine_header()
        self.path = Path(results) if results else RESULTS_DIR / f"{study.name}.json"
        self.provenance = "measured by the command(s) below, on the machine below"
        self.tables: list[dict] = []
        self.notes: list[str] = []
        self.skipped: list[dict] = []
        self.raw = None
        self.measured_on: dict | None = None  # set by inherit()

    # --- printing and collecting ------------------------------------------------------------
    def header(self, lines=()) -> None:
        _machine.print_header(self.study.title, lines, self.machine, self.command)

    def table(self, title: str, columns, rows, *, key: str | None = None,
              notes: str | None = None, show: bool = True) -> dict:
        """Add (and print) a table; ``key`` identifies it across runs (default: the title)."""
        entry = {"key": key or title, "title": title, "columns": [str(c) for c in columns],
                 "rows": [[str(c) for c in row] for row in rows]}
        if notes:
            entry["notes"] = notes
        self.tables = [t for t in self.tables if t["key"] != entry["key"]] + [entry]
        if show:
            print(f"\n### {title}\n")
            print(markdown_table(entry["columns"], entry["rows"]))
            if notes:
                print(f"\n{notes}")
            print(flush=True)
        return entry

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(text, flush=True)

    def skip(self, name: str, reason: str) -> None:
        """Record (and say) that ``name`` was skipped, e.g. its data is missing."""
        self.skipped.append({"name": name, "reason": reason})
        print(f"SKIP {name}: {reason}", flush=True)

    def inherit(self, meta: dict | None) -> None:
        """The tables analyse raw scores stored by an earlier run (``meta``: that results
        file without its raw part): keep its machine and provenance, and record this
        analysis's own command and machine next to them."""
        if not meta:
            return
        self.measured_on = {"command": meta.get("command"), "machine": meta.get("machine"),
                            "provenance": meta.get("provenance")}

    # --- saving -------------------------------------------------------------------------------
    def document(self) -> dict:
        doc = {
            "schema": SCHEMA, "study": self.study.name, "title": self.study.title,
            "script": self.study.script, "status": self.study.status,
            "measures": self.study.measures, "conclusion": self.study.conclusion,
            "chooses": list(self.study.chooses), "command": self.command,
            "parameters": self.parameters, "machine": self.machine,
            "provenance": self.provenance, "tables": self.tables, "notes": self.notes,
        }
        if self.measured_on:
            doc["analysis"] = {"command": self.command, "machine": self.machine}
            doc["command"] = self.measured_on["command"] or self.command
            doc["machine"] = self.measured_on["machine"] or self.machine
            suffix = "; tables re-derived from the stored raw scores by the analysis command"
            base = str(self.measured_on["provenance"] or "measured")
            doc["provenance"] = base if base.endswith(suffix) else base + suffix
        if self.skipped:
            doc["skipped"] = self.skipped
        if self.raw is not None:
            doc["raw"] = jsonable(self.raw)
        return doc

    def save(self, merge: bool = True) -> Path:
        """Write the results file. With ``merge``, the tables of an earlier run of the same
        study that this run did not produce (other keys) are kept, each with its own command,
        machine and provenance."""
        doc = self.document()
        old = read(self.path) if merge and self.path.is_file() else None
        if old and old.get("study") == doc["study"]:
            for table in doc["tables"]:
                table.setdefault("command", doc["command"])
            new = {t["key"]: t for t in doc["tables"]}
            merged = []
            for table in old.get("tables", []):  # in place: a re-measured table keeps its spot
                key = table.get("key", table.get("title"))
                if key in new:
                    merged.append(new.pop(key))
                    continue
                table = dict(table)
                for name in ("command", "machine", "provenance"):
                    table.setdefault(name, old.get(name))
                merged.append(table)
            doc["tables"] = merged + list(new.values())
            commands = []
            for table in doc["tables"]:
                for command in _as_list(table.get("command")):
                    if command not in commands:
                        commands.append(command)
            doc["command"] = commands[0] if len(commands) == 1 else commands
            if isinstance(old.get("raw"), dict) and isinstance(doc.get("raw"), dict):
                doc["raw"] = {**old["raw"], **doc["raw"]}
            elif "raw" in old and "raw" not in doc:
                doc["raw"] = old["raw"]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write(self.path, doc)
        print(f"\nResults: {self.path}", flush=True)
        return self.path


def _as_list(value) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def write(path: Path, doc: dict) -> None:
    Path(path).write_text(json.dumps(jsonable(doc), indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8")


def read(path: str | Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def load_raw(path: str | Path) -> tuple[dict, dict | None]:
    """The raw scores in ``path``: a results file's ``raw`` part (and the file without it, for
    :meth:`Run.inherit`), or a plain cache as the scripts write with ``--cache``."""
    doc = read(path)
    if isinstance(doc, dict) and doc.get("schema") == SCHEMA and "raw" in doc:
        meta = {k: v for k, v in doc.items() if k != "raw"}
        return doc["raw"], meta
    return doc, None


def problems(doc: dict) -> list[str]:
    """Why ``doc`` cannot be published: missing keys, an empty command, a machine header
    without its required fields, tables without rows."""
    out = [f"missing {key!r}" for key in REQUIRED if key not in doc]
    if "command" in doc and not [c for c in _as_list(doc["command"]) if str(c).strip()]:
        out.append("empty 'command'")
    header = doc.get("machine")
    if "machine" in doc:
        if not isinstance(header, dict):
            out.append("'machine' is not a header")
        else:
            out += [f"machine header without {key!r}" for key in _machine.REQUIRED
                    if header.get(key) in (None, "", {})]
    if doc.get("status") not in STATUSES:
        out.append(f"status {doc.get('status')!r} is not one of {STATUSES}")
    tables = doc.get("tables")
    if "tables" in doc and (not isinstance(tables, list) or not tables):
        out.append("no tables")
    for i, table in enumerate(tables if isinstance(tables, list) else []):
        if not table.get("columns") or not table.get("rows"):
            out.append(f"table {i} ({table.get('title')!r}) has no columns or rows")
        elif any(len(row) != len(table["columns"]) for row in table["rows"]):
            out.append(f"table {i} ({table.get('title')!r}) has rows of the wrong length")
    return out
