"""LLM-built questions with evidence spans, and LLM relevance judgements, over any OpenAI-compatible endpoint.

Only `client` imports the `openai` package (the ``llm`` extra), and only when a client is made, so the core and the
judgement file format (`judgements`) work without it. See docs/llm.md.
"""
