"""What every route reads from the app: the settings, the stores and the corpora, one accessor each."""

from __future__ import annotations

from fastapi import Request

from ..corpora import ServedCorpus, find_corpus
from ..db import Database
from ..settings import ServeSettings
from ..store.evaluations import Evaluations
from ..store.question_sets import QuestionSets


def settings(request: Request) -> ServeSettings:
    return request.app.state.settings


def db(request: Request) -> Database:
    return request.app.state.db


def question_sets(request: Request) -> QuestionSets:
    return QuestionSets(request.app.state.db)


def evaluations(request: Request) -> Evaluations:
    return Evaluations(request.app.state.db)


def corpus(request: Request, name: str) -> ServedCorpus:
    return find_corpus(settings(request).datasets, name)
