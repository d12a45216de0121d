"""``ragretrieval answer``: gather contexts, get answers, check them, store the run (docs/answers.md)."""

from __future__ import annotations

from pathlib import Path

import click

from ..answers.batch import AnswerLog, run_answers, run_key
from ..answers.generators import GeneratorOptions
from ..answers.judges import build_judges
from ..answers.render import metric_table, question_line
from ..answers.session import AnswerSession, AnswerSettings
from ..data.dataset import load_dataset
from ..embedders.cache import default_cache_dir
from ..evaluation.report import EvalConfig
from ..llm.replies import check_failures
from .evaluate import DEFAULT_KS, parse_ks, parse_options, retrieval_options, retrieval_settings
from .judge_options import judge_options, judge_settings
from .llm_options import llm_options
from .progress import no_progress_option, terminal_progress
from .runs import keep_report, open_history, save_options

SHOWN_FAILURES = 10


def answer_options(command):
    """Where contexts and answers come from, and how answers are checked."""
    for option in reversed([
        click.option("--generator", required=True,
                     help="extractive | openai:MODEL | http:URL | file:PATH (`ragretrieval plugins` lists them)."),
        click.option("--generator-option", "generator_options", multiple=True,
                     help="key=value for the generator, e.g. request=messages, answer=data.text (http:)."),
        click.option("--contexts", type=click.Choice(["retrieved", "given"]), default="retrieved", show_default=True,
                     help="The retriever's top chunks, or the documents each question lists in 'context'."),
        click.option("--context-k", type=click.IntRange(min=1), default=5, show_default=True,
                     help="Retrieved chunks shown to the generator."),
        click.option("--shuffle-context", is_flag=True, help="Shuffle given contexts per question (seeded)."),
        click.option("--seed", type=int, default=0, show_default=True, help="Seed of --shuffle-context."),
        click.option("--k", "ks", default=None, help="Cutoffs of the retrieval metrics [default: 1,3,5,10 and "
                                                     "--context-k]."),
        click.option("--rel-level", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Grade from which a label is relevant."),
        click.option("--system-message", default=None,
                     help="System message [default: the language's; \"\" sends none]."),
        click.option("--refusal-message", default=None,
                     help="The phrase that counts as a refusal (and that the prompt asks for) [default: the "
                          "language's; Polish: RAG-IFEval's]."),
        click.option("--temperature", type=float, default=0.0, show_default=True),
        click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Most tokens per answer."),
        click.option("--threads", type=click.IntRange(min=1), default=4, show_default=True,
                     help="Questions answered at once."),
        click.option("--sleep-time", type=click.FloatRange(min=0), default=1.0, show_default=True,
                     help="Seconds before the first retry (doubling, with jitter)."),
        click.option("--text-completion", is_flag=True, help="Use /completions instead of /chat/completions."),
        click.option("--log", "log_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Append one JSON line per question (id, question, answer, scores)."),
        click.option("--lemmatizer", default="none", show_default=True,
                     help="none | simplemma[:LANG] | fst:PREFIX (PREFIX.fst and PREFIX_lemmas.bin)."),
        click.option("--match", type=click.Choice(["substring", "words"]), default="substring", show_default=True,
                     help="include/exclude: substrings (the benchmark's rule) or whole words."),
        click.option("--citation-pattern", default=None,
                     help="Regular expression whose first group holds a citation [default: [0], [0, 2], [doc id]]."),
        click.option("--unsafe-words", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
                     help="One unsafe word per line, for the safe check."),
        click.option("--no-cite-relevant", is_flag=True,
                     help="Do not expect questions without expect.cite to cite their relevant documents."),
    ]):
        command = option(command)
    return command


@click.command("answer")
@click.option("--dataset", "dataset_dir", required=True, type=click.Path(path_type=Path), help="Dataset folder.")
@click.option("--questions", type=click.Path(path_type=Path), help="Another questions.jsonl for the same corpus.")
@answer_options
@retrieval_options
@llm_options("", "question, docs, documents, refusal_message",
             names=("base_url", "api_key_env", "prompt_file", "language", "price_in", "price_out", "timeout",
                    "max_retries"), languages=("zh", "en", "pl"), max_retries=5)
@judge_options()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON report here.")
@click.option("-v", "--verbose", is_flag=True, help="One line per question.")
@no_progress_option
@save_options
def answer_command(dataset_dir, questions, generator, generator_options, contexts, context_k, shuffle_context, seed,
                   ks, rel_level, system_message, refusal_message, temperature, max_tokens, threads, sleep_time,
                   text_completion, log_file, lemmatizer, match, citation_pattern, unsafe_words, no_cite_relevant,
                   base_url, api_key_env, prompt_file, language, price_in, price_out, timeout, max_retries, judges,
                   judge_samples, judge_temperature, judge_prompts, judge_nuggets, judge_nugget_batch, judge_model,
                   judge_base_url, judge_api_key_env, judge_language, judge_price_in, judge_price_out, judge_timeout,
                   judge_max_retries, out, verbose, no_progress, runs_db, name, tags, no_save, executor_spec,
                   index_dir, rebuild, **retrieval) -> None:
    """Answer every question of a dataset and score the answers: contexts (retrieved or given), an answer from the
    generator, its citations, the deterministic checks of each question, the LLM judges asked for (--judge), and
    the retrieval metrics of the same ranking. The run is stored in the runs history like an `eval`."""
    from ..embedders.executors import make_executor

    cutoffs = sorted({*(parse_ks(ks) if ks else DEFAULT_KS), context_k})
    config = EvalConfig(**retrieval_settings(**retrieval), ks=cutoffs, top_k=context_k, rel_level=rel_level)
    options = GeneratorOptions(
        base_url=base_url, api_key_env=api_key_env, prompt_file=prompt_file, system_message=system_message,
        temperature=temperature, max_tokens=max_tokens, max_retries=max_retries, sleep_time=sleep_time,
        timeout=timeout, text_completion=text_completion, price_in=price_in, price_out=price_out,
        options=parse_options(generator_options, "--generator-option"))
    settings = AnswerSettings(generator=generator, contexts=contexts, context_k=context_k,
                              shuffle_context=shuffle_context, seed=seed, retrieval=config, language=language,
                              lemmatizer=lemmatizer, match=match, refusal_message=refusal_message,
                              unsafe_words=unsafe_words, citation_pattern=citation_pattern,
                              cite_relevant=not no_cite_relevant, generator_options=options)
    history = None if no_save else open_history(runs_db)  # a bad URL fails before any answer is paid for
    progress = terminal_progress(no_progress)
    dataset = load_dataset(dataset_dir, questions)
    click.echo(f"loaded {len(dataset.questions)} questions over {len(dataset.documents)} documents", err=True)
    from ..retrieval.registry import BuildContext

    executor = make_executor(executor_spec)
    click.get_current_context().call_on_close(executor.close)
    context = BuildContext(progress=progress, executor=executor, index_dir=index_dir, rebuild=rebuild)
    session = AnswerSession(dataset, settings, progress=progress, context=context)
    names, judging = judge_settings(
        judges, judge_samples, judge_temperature, judge_prompts, judge_nuggets, judge_nugget_batch, judge_model,
        judge_base_url, judge_api_key_env, judge_language, judge_price_in, judge_price_out, judge_timeout,
        judge_max_retries, generator=generator, base_url=base_url, api_key_env=api_key_env,
        data_language=session.language, dataset_dir=dataset_dir)
    if names:
        session.scorers += build_judges(names, judging)
    journal = default_cache_dir() / "answers" / f"{run_key(session)}.journal.jsonl"
    log = AnswerLog(log_file) if log_file else None
    try:
        report = run_answers(session, threads, journal, progress, on_answer=log)
    finally:
        if log is not None:
            log.close()
    progress.close()
    failed = [q for q in report.questions if q.error is not None]
    check_failures([q.error for q in failed], len(report.questions), "questions",
                   f"the {len(report.questions) - len(failed)} answered are kept in {journal}")
    if verbose:
        for i, answered in enumerate(report.questions, start=1):
            click.echo(question_line(i, len(report.questions), answered))
    for answered in failed[:SHOWN_FAILURES]:
        click.echo(f"warning: no answer for {answered.id}: {answered.error}", err=True)
    if len(failed) > SHOWN_FAILURES:
        click.echo(f"warning: ... and {len(failed) - SHOWN_FAILURES} more questions without an answer", err=True)
    click.echo(metric_table(report))
    keep_report(report, out, history, name, tags)
    journal.unlink(missing_ok=True)
