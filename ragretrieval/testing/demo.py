"""A small demo dataset for examples and test kits, without pytest: three recipes and three questions with given
contexts, checks and reference answers (`demo_dataset`), and nuggets for them (`demo_nuggets`). The documentation's
examples import it after a plain ``pip install ragretrieval``; the conformance suites build their fixtures on it."""

from __future__ import annotations

from ..data.corpus import Document, corpus_fingerprint
from ..data.dataset import Dataset, Manifest, Provenance, QuestionRecord, load_dataset, write_dataset
from ..data.nuggets import Nugget, QuestionNuggets, write_nuggets

DOCUMENTS = (
    Document("soup/tomato.md", "Tomato egg soup", "# Tomato egg soup\n\nCut the tomatoes. Boil them for five minutes."
             "\nStir in two beaten eggs and a pinch of salt."),
    Document("staple/rice.md", "Egg fried rice", "# Egg fried rice\n\nUse cold rice from the day before. Fry the eggs "
             "first, then the rice, on a high flame."),
    Document("dessert/pudding.md", "Rice pudding", "# Rice pudding\n\nSimmer rice in milk with sugar for forty "
             "minutes, stirring often."),
)
QUESTIONS = (
    ("q-soup", "How long do the tomatoes boil for the egg soup?", ["soup/tomato.md", "dessert/pudding.md"],
     {"include": [["five minutes", "5 minutes"]], "cite": ["soup/tomato.md"]}, "Five minutes."),
    ("q-rice", "Which rice is best for egg fried rice?", ["dessert/pudding.md", "staple/rice.md"],
     {"include": ["cold rice"], "cite": ["staple/rice.md"]}, "Cold rice from the day before."),
    ("q-none", "What is the capital of France?", ["dessert/pudding.md"], {"refuse": True},
     "The recipes do not say: the answer is a refusal."),
)
SAMPLES = 10  # the judge suite's sample(n), n below this, has nuggets too


def demo_dataset(folder) -> Dataset:
    """The demo dataset (three recipes; three questions with given contexts, checks and reference answers), written
    to `folder` and loaded."""
    questions = [QuestionRecord(id=qid, text=text, context=context, expect=expect, ground_truth=truth,
                                provenance=Provenance(generator="hand"))
                 for qid, text, context, expect, truth in QUESTIONS]
    manifest = Manifest(corpus_fingerprint=corpus_fingerprint(DOCUMENTS), n_documents=len(DOCUMENTS),
                        n_questions=len(questions))
    write_dataset(folder, DOCUMENTS, questions, manifest)
    return load_dataset(folder)


def demo_nuggets(path):
    """Write the demo nuggets file to `path` and return it: three nuggets (two vital) for each demo question and for
    ``q-soup-0`` to ``q-soup-9``; an empty list (no nuggets: not applicable) for ``q-none``."""
    facts = [Nugget(text="The tomatoes boil.", importance="vital"),
             Nugget(text="They boil for five minutes.", importance="vital"),
             Nugget(text="The tomatoes are cut first.", importance="okay")]
    ids = [f"q-soup-{n}" for n in range(SAMPLES)] + [qid for qid, *_ in QUESTIONS]
    write_nuggets(path, [QuestionNuggets(question_id=qid, nuggets=[] if qid == "q-none" else facts) for qid in ids])
    return path
