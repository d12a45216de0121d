"""A default is written in one place: the timeouts, retries, first waits and requests at once of remote calls in
their caller's `RemoteCall` (work/remote.py), the paired test's in `CompareSettings` (analysis/settings.py), the
search timing's threads in `EvalConfig`, an embedder's precision and batch size in `EmbedSettings`, the compare
triage's filter and order in `Triage` and the review order in store/review.py; the paired test's level, which the
evaluation pipeline's test against exact search shares, in work/significance.py. This scan of every module of
ragretrieval/ fails where such a default is typed as a literal anywhere else: a parameter's default, a settings
field, a keyword argument (remote calls and the paired test), a command-line option's default, a module's constant
named after a setting of the paired test (``ALPHA = 0.05``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "ragretrieval"
REMOTE = {"timeout", "max_retries", "retries", "backoff", "sleep_time", "concurrency", "threads", "n_workers",
          "judge_timeout", "judge_max_retries"}
PAIRED = {"test", "correction", "alpha", "n_resamples"}
# watched as defaults only: as a call's keyword they are a choice (``replace(triage, filter="all")``), not a default
DEFAULTS_ONLY = {"search_concurrency", "dtype", "batch_size", "order", "filter", "per_doc"}
WATCHED = REMOTE | PAIRED | DEFAULTS_ONLY
FLAGS = {"--per-doc", "--search-concurrency", "--embed-dtype", "--embed-batch-size", "--timeout", "--llm-timeout", "--judge-timeout", "--max-retries", "--llm-max-retries",
         "--judge-max-retries", "--sleep-time", "--concurrency", "--threads", "--test", "--correction", "--alpha",
         "--n-resamples"}
DECLARATIONS = {"RemoteCall", "but"}  # RemoteCall(timeout=120.0, ...) and LLM_CALLS.but(retries=5) declare them
MODELS = {("analysis/settings.py", "CompareSettings"), ("evaluation/report.py", "EvalConfig"),
          ("embedders/settings.py", "EmbedSettings"), ("server/store/triage.py", "Triage"),
          ("llm/questions/build.py", "QuestionOptions"),  # questions per document, for the command line
          ("server/schemas.py", "GenerateIn")}  # they declare their own (the web dialog asks fewer per document)
# module constants that declare a setting of the paired test: the one place its level is written
CONSTANTS = {("work/significance.py", "ALPHA"),
             ("retrieval/fusion/__init__.py", "DEFAULT_ALPHA")}  # weighted fusion's dense weight: another alpha
TEST_KITS = "testing/"  # the conformance kits' values are a test's choices (two threads, no retry), no default


def _literal(node) -> bool:
    """A number or a text typed in place (None, booleans and the empty text say 'unset' or 'off', never a default
    value)."""
    return (isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value is not None
            and node.value != "" and isinstance(node.value, (int, float, str)))


def _name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _default_in(node) -> ast.AST | None:
    """The default a field's or query's value holds: the value itself, or ``Field(DEFAULT, ...)``,
    ``Query(DEFAULT, ...)``, ``default=DEFAULT`` (also in ``described(HELP, default=DEFAULT)``, a settings
    dataclass's field)."""
    if isinstance(node, ast.Call):
        if _name(node.func) not in ("Field", "Query", "described"):
            return None
        if node.args and _literal(node.args[0]) and _name(node.func) != "described":  # described's is its help
            return node.args[0]
        return next((k.value for k in node.keywords if k.arg == "default" and _literal(k.value)), None)
    return node if _literal(node) else None


def _setting_named(constant: str) -> str:
    """The setting a module constant is named after: ``ALPHA`` and ``DEFAULT_ALPHA`` are ``alpha``."""
    return constant.lower().removeprefix("default_")


def found_literals(source: str, path: str) -> list[str]:
    """``path:line name=value`` for each default of `WATCHED` typed as a literal outside its model."""
    tree, problems = ast.parse(source), []

    def report(node, name, value):
        problems.append(f"{path}:{node.lineno} {name}={value.value!r}")

    for statement in tree.body:
        target = statement.target if isinstance(statement, ast.AnnAssign) else (
            statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None)
        if (isinstance(target, ast.Name) and _setting_named(target.id) in PAIRED and statement.value is not None
                and _literal(statement.value) and (path, target.id) not in CONSTANTS):
            report(statement, target.id, statement.value)

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            for arg, default in pairs:
                value = _default_in(default)
                if arg.arg in WATCHED and value is not None:
                    report(default, arg.arg, value)
        elif isinstance(node, ast.ClassDef):
            if (path, node.name) in MODELS:
                continue
            for statement in node.body:
                target = statement.target if isinstance(statement, ast.AnnAssign) else (
                    statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    else None)
                value = _default_in(statement.value) if target is not None and statement.value is not None else None
                if isinstance(target, ast.Name) and target.id in WATCHED and value is not None:
                    report(statement, target.id, value)
        elif isinstance(node, ast.Call):
            if _name(node.func) not in DECLARATIONS:
                for keyword in node.keywords:
                    if keyword.arg in WATCHED - DEFAULTS_ONLY and _literal(keyword.value):
                        report(keyword.value, keyword.arg, keyword.value)
            flags = {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
            if flags & FLAGS:
                for keyword in node.keywords:
                    if keyword.arg == "default" and _literal(keyword.value):
                        report(keyword.value, sorted(flags & FLAGS)[0], keyword.value)
    return problems


def test_no_default_of_a_remote_call_or_the_paired_test_is_typed_outside_its_model():
    problems = []
    for module in sorted(PACKAGE.rglob("*.py")):
        relative = module.relative_to(PACKAGE).as_posix()
        if relative.startswith(TEST_KITS):
            continue
        problems += found_literals(module.read_text(encoding="utf-8"), relative)
    assert not problems, "declare these in the caller's RemoteCall or in CompareSettings:\n" + "\n".join(problems)


@pytest.mark.parametrize("source, name", [
    ("def f(timeout: float = 120.0): pass", "timeout"),
    ("def f(*, concurrency=4): pass", "concurrency"),
    ("class S:\n    max_retries: int = 5", "max_retries"),
    ("class S:\n    sleep_time: Wait = Field(1.0, description='x')", "sleep_time"),
    ("class S:\n    threads: int = Field(default=4, ge=1)", "threads"),
    ("client = make(timeout=30)", "timeout"),
    ("request(backoff=0.5)", "backoff"),
    ("def route(test: str = Query('t', max_length=20)): pass", "test"),
    ("option = click.option('--correction', default='holm')", "--correction"),
    ("renamed_option('--concurrency', '--threads', 'threads', default=4)", "--concurrency"),
    ("def compare(alpha: float = 0.05): pass", "alpha"),
    ("def load(name, dtype: str = 'auto'): pass", "dtype"),
    ("def embed_cached(texts, batch_size: int = 64): pass", "batch_size"),
    ("class EvalOptions:\n    search_concurrency: int = Field(4, ge=1)", "search_concurrency"),
    ("option = click.option('--search-concurrency', default=4)", "--search-concurrency"),
    ("def review_next(order: str = 'uncertain'): pass", "order"),
    ("def page(filter: str = Query('all', max_length=20)): pass", "filter"),
    ("ALPHA = 0.05  # the test's level for the sentence", "ALPHA"),
    ("DEFAULT_CORRECTION: str = 'holm'", "DEFAULT_CORRECTION"),
    ("class Plan:\n    per_doc: int = 3", "per_doc"),
    ("option = click.option('--per-doc', type=int, default=3)", "--per-doc"),
    ("class WorkerSettings:\n    threads: int = described('Questions at once', default=4)", "threads"),
])
def test_the_scan_finds_each_way_of_typing_a_default(source, name):
    [problem] = found_literals(source, "m.py")
    assert f" {name}=" in problem


@pytest.mark.parametrize("source", [
    "LLM_CALLS = RemoteCall(timeout=120.0, retries=4, backoff=1.0, concurrency=4)",
    "GENERATOR_CALLS = LLM_CALLS.but(retries=5)",
    "class S:\n    timeout: Timeout = LLM_CALLS.field('timeout')",
    "def f(timeout: float | None = None, threads: int = LLM_CALLS.concurrency): pass",
    "client(timeout=settings.timeout)",
    "replace(triage, filter='changed')",
    "from ..work.significance import ALPHA",
    "ALPHA = PAIRED.alpha",
    "def page(filter: str = Query('', max_length=20), order: str = DEFAULT_ORDER): pass",
])
def test_the_scan_lets_declarations_and_their_uses_pass(source):
    assert found_literals(source, "m.py") == []
