"""LLM-built questions with evidence spans, and LLM relevance judgements, over any OpenAI-compatible endpoint.

Only `client` imports the `openai` package, and only when a client is made, so commands that never call a model do
not pay for importing it. See docs/llm.md.
"""
