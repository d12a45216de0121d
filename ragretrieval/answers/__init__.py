"""Answer-side evaluation: answers checked by rules that need no judge model (checks/), the text normalisation the
checks share (normalize.py), and citation parsing (citations.py). See docs/answers.md."""
