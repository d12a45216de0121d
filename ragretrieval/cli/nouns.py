"""The nouns of ``ragretrieval --help`` (dataset, questions, judge, runs): groups of verbs, each verb imported only
when it runs (cli/lazy.py), so ``ragretrieval NOUN --help`` stays light."""

from __future__ import annotations

from .aliases import DefaultVerbGroup
from .lazy import Lazy, LazyGroup

dataset_group = LazyGroup(
    "dataset",
    help="Make a dataset (corpus.jsonl, questions.jsonl, manifest.json): `build` from a folder of Markdown files, "
         "`import` a benchmark, `export` as BEIR.",
    lazy={
        "build": Lazy(".build_dataset:build_dataset", "Build a dataset (corpus.jsonl, questions.jsonl, "
                      "manifest.json) from a folder of Markdown files."),
        "import": Lazy(".import_dataset:import_dataset_command", "Import a benchmark with its own corpus: a BEIR "
                       "folder (BENCHMARK with corpus.jsonl, queries.jsonl, qrels/<split>.tsv), RAG-IFEval "
                       "(--documents, --samples) or a legal RAG benchmark (BENCHMARK folder of JSON files, --source "
                       "transcript.md)."),
        "export": Lazy(".export_dataset:export_dataset_command", "Write DATASET as a BEIR folder: every document, "
                       "every question (as a query; what BEIR has no field for is kept in its metadata.ragretrieval), "
                       "and the graded judgements. import-dataset --format beir reads it back."),
    })

questions_group = LazyGroup(
    "questions",
    help="Question sets: `import` and `export` them (agent-evaluation JSONL, ApeRAG), `generate` them with a model, "
         "`import-traces` turns production traces into one, `nuggets` writes the facts a good answer to each holds.",
    lazy={
        "import": Lazy(".questions_io:import_command", "Turn a question-set file into a questions.jsonl: "
                       "agent-evaluation JSONL (request, expected_retrieved_context, expected_response: the expected "
                       "context labels retrieval, the expected response is the reference answer), or an ApeRAG CSV / "
                       "JSON file (question_type, question_text, ground_truth: questions judged on their answers)."),
        "export": Lazy(".questions_io:export_command", "Write a question set as agent-evaluation JSONL (request_id, "
                       "request, expected_retrieved_context), or as an ApeRAG CSV / JSON file (question_type, "
                       "question_text, ground_truth)."),
        "generate": Lazy(".questions_generate:generate_command", "Ask a model for questions about the documents of "
                         "DATASET, each with the passage that answers it, and write them to their own questions "
                         "file; questions the dataset already asks are not asked again."),
        "import-traces": Lazy(".import_traces:import_traces_command", "Read production traces and write one "
                              "agent-evaluation record per trace: request, response, the last retriever's documents "
                              "as retrieved_context, token counts and latency."),
        "nuggets": Lazy(".questions:nuggets_command", "Ask a model for the nuggets of every question of DATASET that "
                        "has none yet: short facts, each vital or okay, from the question's reference answer and "
                        "relevant passages."),
    })

judge_group = DefaultVerbGroup(
    "judge", default_verb="chunks",
    help="Grade with an LLM: `chunks` labels the pooled top chunks of eval runs (for `eval --judgements`), "
         "`answers` judges the stored answers of an answer run, `calibrate` sets a judge's mean against human "
         "labels. The 0.2 form `judge --dataset D --runs R` still runs as `judge chunks` (with a warning).",
    lazy={
        "chunks": Lazy(".judge:judge_command", "Grade the pooled top chunks of eval runs 0-3 with an LLM, for use as "
                       "chunk labels by `eval --judgements`."),
        "answers": Lazy(".judge_answers:judge_answers_command", "Judge the stored answers of an answer run (a run id "
                        "or name of the history, or an `answer --out` report file) and add the judges' verdicts and "
                        "metrics to it."),
        "calibrate": Lazy(".calibrate:calibrate_command", "Three estimates of a judge metric's mean: the judge alone "
                          "(biased by the judge), the labels alone (a wide interval) and the calibrated one (the "
                          "judge corrected by the labels: unbiased, narrower than the labels alone when the judge "
                          "agrees with people)."),
    })

runs_group = LazyGroup(
    "runs",
    help="The history of evaluation runs (every `eval` and every sweep cell is stored).",
    lazy={
        "list": Lazy(".runs:list_command", "List runs, oldest first."),
        "show": Lazy(".runs:show_command", "Show a run: labels, data fingerprints, configuration, package versions "
                     "and the summary table."),
        "rm": Lazy(".runs:rm_command", "Delete runs (by id, unique id prefix or unique name)."),
        "tag": Lazy(".runs:tag_command", "Add (or --remove) tags."),
        "rename": Lazy(".runs:rename_command", "Give a run a name (an empty name removes it); names work wherever "
                       "an id does, when unique."),
        "export": Lazy(".runs:export_command", "Export a run as a TREC run file (qid Q0 docid rank score run-id) or "
                       "as JSON (run + full report)."),
        "compare": Lazy(".compare:compare_command", "Compare RUN_B (and more) against RUN_A question by question."),
        "report": Lazy(".report:report_command", "Write one self-contained HTML page about RUN (report files from "
                       "`eval --out` or history run ids): the configurations, a summary, plots, the comparison "
                       "against the first run, changed questions and diagnostics; with --calibrate-labels, the "
                       "calibrated means of a judge metric."),
    })
