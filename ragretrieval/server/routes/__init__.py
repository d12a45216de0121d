"""The routes: the JSON API under ``/api/v1`` (question_sets.py, evaluations.py, corpora.py), the pages
(pages.py), the login form (auth.py) and the OpenAPI docs page (docs.py)."""
