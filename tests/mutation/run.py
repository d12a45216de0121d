"""`make mutation`: run mutmut over each group of groups.toml against the tests that cover it, then print the kill
rate per module, the equivalent survivors (with the reason from groups.toml) and every survivor nobody explained.

Each group runs in its own folder, ``.mutation/<group>/`` (a copy of the package, the tests, the demo data and
pyproject.toml with the group's ``[tool.mutmut]`` section), so a group's mutants only ever run its own tests. A run
starts fresh unless ``--keep`` (mutmut then re-checks only what changed); ``--retest`` runs again only the survivors
nobody explained, with the tests as they are now. ``--update-doc`` writes the table into docs/testing.md between its
markers. Not part of `make test`: the whole run takes a long time (docs/testing.md).

    python tests/mutation/run.py [GROUP ...] [--jobs N] [--keep | --retest | --report-only] [--update-doc]
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).with_name("groups.toml")
WORK = ROOT / ".mutation"
DOC = ROOT / "docs" / "testing.md"
COPIED = ("ragretrieval", "tests", "datasets")
START, END = "<!-- mutation-table:start -->", "<!-- mutation-table:end -->"
KILLED = {"killed", "timeout", "segfault", "caught by type check"}
RESULT = re.compile(r"^\s+(\S+): (.+)$")


@dataclass
class Module:
    path: str
    counts: dict[str, int] = field(default_factory=dict)
    equivalent: list[tuple[str, str, str]] = field(default_factory=list)  # (mutant, change, reason)
    unexplained: list[tuple[str, str, str]] = field(default_factory=list)  # (mutant, status, change)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def killed(self) -> int:
        return sum(n for status, n in self.counts.items() if status in KILLED)

    def rate(self) -> float:
        live = self.total - len(self.equivalent)
        return self.killed / live if live else 1.0


def sync(source: Path, target: Path) -> None:
    """Make `target` a copy of `source`, rewriting only files whose bytes differ. mutmut regenerates a module's mutants
    only when its source is newer than them, so a rewritten file gets the time of the copy, not the source's (a file
    changed by a checkout or a merge can be older than the last run's mutants)."""
    wanted = set()
    for path in source.rglob("*"):
        if "__pycache__" in path.parts or path.suffix == ".pyc" or not path.is_file():
            continue
        relative = path.relative_to(source)
        wanted.add(relative)
        copy = target / relative
        if not copy.exists() or copy.read_bytes() != path.read_bytes():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
    for path in list(target.rglob("*")) if target.exists() else []:
        if path.is_file() and "__pycache__" not in path.parts and path.relative_to(target) not in wanted:
            path.unlink()


def mutmut_section(group: dict) -> str:
    lines = ["", "[tool.mutmut]", 'source_paths = ["ragretrieval/"]', 'also_copy = ["datasets/"]',
             f"only_mutate = {json.dumps(group['mutate'])}",
             f"pytest_add_cli_args_test_selection = {json.dumps(group['tests'])}",
             f"pytest_add_cli_args = {json.dumps(['-p', 'no:cacheprovider', '--tb=no', *deselected(group)])}",
             f"timeout_multiplier = {group.get('timeout_multiplier', 4.0)}", "timeout_constant = 10.0"]
    return "\n".join(lines) + "\n"


def deselected(group: dict) -> list[str]:
    """pytest options leaving out the group's `deselect` tests (node ids)."""
    return [option for test in group.get("deselect", []) for option in ("--deselect", test)]


def prepare(name: str, group: dict, keep: bool) -> Path:
    folder = WORK / name
    if not keep and (folder / "mutants").exists():
        shutil.rmtree(folder / "mutants")
    folder.mkdir(parents=True, exist_ok=True)
    for tree in COPIED:
        sync(ROOT / tree, folder / tree)
    shared = next((p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if p.is_dir()), None)
    if shared is not None and not (folder / "shared").exists():  # tests find ../shared beside the repository
        (folder / "shared").symlink_to(shared, target_is_directory=True)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pyproject = pyproject.split("\n[tool.mutmut]")[0] + mutmut_section(group)
    if not (folder / "pyproject.toml").exists() or (folder / "pyproject.toml").read_text() != pyproject:
        (folder / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return folder


def mutmut(folder: Path, *args: str, log=None, env: dict | None = None) -> str:
    env = dict(os.environ, RAGRETRIEVAL_HYPOTHESIS="mutation", **(env or {}))
    command = [sys.executable, "-m", "mutmut", *args]
    if log is not None:
        return str(subprocess.run(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT).returncode)
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=True).stdout


def run_group(name: str, group: dict, jobs: int, keep: bool, mutants: list[str] = ()) -> None:
    """One mutmut run; with `mutants`, only those (after new tests: mutmut finds them and records what they call)."""
    folder = prepare(name, group, keep or bool(mutants))
    print(f"[{name}] mutmut run in {folder.relative_to(ROOT)} ({', '.join(group['mutate'])})"
          + (f", {len(mutants)} survivors again" if mutants else ""), flush=True)
    started = time.monotonic()
    with open(folder / ("retest.log" if mutants else "run.log"), "w", encoding="utf-8") as log:
        code = mutmut(folder, "run", "--max-children", str(jobs), *mutants, log=log, env=group.get("env"))
    seconds = time.monotonic() - started
    timing = folder / "timing.json"
    if mutants and timing.exists():
        record = json.loads(timing.read_text()) | {"retest_seconds": seconds}
    else:
        record = {"seconds": seconds, "jobs": jobs, "exit_code": code}
    timing.write_text(json.dumps(record))
    print(f"[{name}] done in {seconds / 60:.1f} min (exit code {code}; log in {folder})", flush=True)


class MutatedFile:
    """The functions of a file as mutmut wrote it in mutants/: the original (``*__mutmut_orig``) and every mutant;
    a mutant of a default argument changes the def line."""

    def __init__(self, path: Path):
        source = path.read_text(encoding="utf-8")
        every_line = source.splitlines()  # sliced per function: ast.get_source_segment re-splits the file each call
        self.bodies = {}
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "__mutmut_" in node.name:
                lines = every_line[node.lineno - 1 : node.end_lineno]
                lines[0] = lines[0].replace(node.name, "", 1)  # the def line without the mutant's name
                self.bodies[node.name] = lines

    def change(self, mutant: str) -> str:
        """The mutated line(s), stripped; what `mutmut show` marks with +."""
        name = mutant.rsplit(".", 1)[-1]
        original = self.bodies[name.rsplit("__mutmut_", 1)[0] + "__mutmut_orig"]
        added = [line[2:].strip() for line in difflib.ndiff(original, self.bodies[name]) if line.startswith("+ ")]
        return " / ".join(added) or "(line removed)"


def function_of(mutant: str) -> str:
    return mutant.rsplit("__mutmut_", 1)[0]


def collect(name: str, group: dict, equivalents: list[dict]) -> list[Module]:
    folder = WORK / name
    paths = sorted({p.relative_to(ROOT).as_posix() for pattern in group["mutate"] for p in ROOT.glob(pattern)})
    modules = {path: Module(path) for path in paths}
    module_of = {path.removesuffix(".py").replace("/", "."): path for path in paths}
    mutated: dict[str, MutatedFile] = {}
    for line in mutmut(folder, "results", "--all", "true").splitlines():
        match = RESULT.match(line)
        if not match:
            continue
        mutant, status = match.groups()
        path = max((p for prefix, p in module_of.items() if mutant.startswith(prefix + ".")), key=len)
        module = modules[path]
        module.counts[status] = module.counts.get(status, 0) + 1
        if status in KILLED:
            continue
        if path not in mutated:
            mutated[path] = MutatedFile(folder / "mutants" / path)
        change = mutated[path].change(mutant)
        known = next((e for e in equivalents if e["function"] == function_of(mutant) and e["change"] == change), None)
        if known and status == "survived":
            module.equivalent.append((mutant, change, known["reason"]))
        else:
            module.unexplained.append((mutant, status, change))
    return list(modules.values())


def minutes(name: str) -> str:
    timing = WORK / name / "timing.json"
    if not timing.exists():
        return "?"
    data = json.loads(timing.read_text())
    again = f" + {data['retest_seconds'] / 60:.0f} min retest" if "retest_seconds" in data else ""
    return f"{data['seconds'] / 60:.0f} min{again}, {data['jobs']} jobs"


def table(results: list[tuple[str, Module]]) -> str:
    rows = ["| module | mutants | killed | equivalent | not killed | kill rate | group (run time) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for name, m in results:
        rows.append(f"| `{m.path}` | {m.total} | {m.killed} | {len(m.equivalent)} | {len(m.unexplained)} | "
                    f"{100 * m.rate():.1f} % | {name} ({minutes(name)}) |")
    rows += ["", "Equivalent survivors (no test can tell them from the original):", ""]
    for _, m in results:
        for mutant, change, reason in m.equivalent:
            rows.append(f"- `{mutant.split('.', 2)[-1]}`: `{change}`: {reason}")
    unexplained = [(m, u) for _, m in results for u in m.unexplained]
    if unexplained:
        rows += ["", "Survivors not killed and not shown equivalent:", ""]
        rows += [f"- `{mutant.split('.', 2)[-1]}` ({status}): `{change}`" for _, (mutant, status, change) in unexplained]
    return "\n".join(rows)


def update_doc(text: str) -> None:
    doc = DOC.read_text(encoding="utf-8")
    before, _, rest = doc.partition(START)
    _, _, after = rest.partition(END)
    DOC.write_text(f"{before}{START}\n{text}\n{END}{after}", encoding="utf-8")


def main(argv=None) -> int:
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    groups = config["groups"]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", help=f"groups to run (default: all of {', '.join(groups)})")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants tested at once")
    parser.add_argument("--keep", action="store_true", help="reuse the previous run's results where still valid")
    parser.add_argument("--retest", action="store_true",
                        help="run again only the survivors not listed as equivalent (after writing tests for them)")
    parser.add_argument("--report-only", action="store_true", help="print the table of the last run, run nothing")
    parser.add_argument("--update-doc", action="store_true", help=f"write the table into {DOC.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    unknown = [g for g in args.groups if g not in groups]
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; known: {', '.join(groups)}")
    chosen = args.groups or list(groups)
    if args.retest:
        for name in chosen:
            survivors = [mutant for module in collect(name, groups[name], config.get("equivalent", []))
                         for mutant, _, _ in module.unexplained]
            if survivors:
                run_group(name, groups[name], args.jobs, True, survivors)
    elif not args.report_only:
        for name in chosen:
            run_group(name, groups[name], args.jobs, args.keep)
    reported = [name for name in (args.groups or groups) if (WORK / name / "mutants").exists()]
    results = [(name, m) for name in reported for m in collect(name, groups[name], config.get("equivalent", []))]
    text = table(results)
    print(text)
    if args.update_doc:
        update_doc(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
