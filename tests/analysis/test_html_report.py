"""The HTML report: content, escaping, atomic write, diagnostics, and rendering in a real headless Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragretrieval.analysis.diagnostics import confusable_pairs, random_baseline, saturation_warnings
from ragretrieval.cli import main

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def html_file(report_files, tmp_path):
    out = tmp_path / "out" / "report.html"
    result = CliRunner().invoke(main, ["runs", "report", *map(str, report_files), "--html", str(out), "--k", "3",
                                       "--n-resamples", "2000"])
    assert result.exit_code == 0, result.output
    return out


def test_report_file_content_and_escaping(html_file):
    text = html_file.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in text  # a question
    assert "&lt;img src=x onerror=alert(1)&gt;" in text  # a document title
    assert "<script" not in text and "<img" not in text
    assert "http://" not in text and "https://" not in text  # nothing to fetch
    assert [p.name for p in html_file.parent.iterdir()] == ["report.html"]  # no temp file left behind
    for section in ("configuration", "summary", "comparison", "plots", "changes", "diagnostics"):
        assert f'id="{section}"' in text


def test_report_refuses_trec_runs_and_unknown_metrics(report_files, tmp_path):
    (tmp_path / "q.txt").write_text("q 0 d 1\n", encoding="utf-8")
    (tmp_path / "r.run").write_text("q Q0 d 1 1.0 t\n", encoding="utf-8")
    trec = CliRunner().invoke(main, ["runs", "report", str(report_files[0]), str(tmp_path / "r.run"), "--qrels",
                                     str(tmp_path / "q.txt"), "--html", str(tmp_path / "x.html")])
    assert trec.exit_code == 2 and "r is a TREC run" in trec.output
    metric = CliRunner().invoke(main, ["runs", "report", *map(str, report_files), "-m", "map", "--html",
                                       str(tmp_path / "x.html")])
    assert metric.exit_code == 2 and "metric map is not stored at doc level" in metric.output
    assert not (tmp_path / "x.html").exists()


def test_titles_fall_back_to_ids_without_the_dataset(reports, tmp_path):
    moved = reports[0].model_copy(update={"dataset": reports[0].dataset.model_copy(update={"path": "/nonexistent"})})
    moved.save(tmp_path / "moved.json")
    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["runs", "report", str(tmp_path / "moved.json"), "--html", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "dataset folder /nonexistent not found or unreadable: documents are shown by id only" in text
    assert "红烧肉的做法" not in text and "<code>meat_dish/红烧肉.md</code>" in text


def test_random_baseline_matches_a_seeded_simulation():
    """The analytic expectations against 20,000 seeded random permutations (tolerance: ~5 standard errors)."""
    n_docs, relevant, ks = 12, [1, 2, 3], [1, 3, 5, 12, 20]
    expected = random_baseline(n_docs, relevant, ks)
    rng = np.random.default_rng(0)
    trials = 20_000
    for k in ks:
        sums = {"recall": 0.0, "precision": 0.0, "hit_rate": 0.0, "mrr": 0.0}
        for r in relevant:
            ranks = np.argsort(rng.random((trials, n_docs)), axis=1)[:, :k] < r  # docs 0..r-1 are relevant
            found = ranks.sum(axis=1)
            first = np.where(ranks.any(axis=1), ranks.argmax(axis=1) + 1, np.inf)
            sums["recall"] += (found / r).mean()
            sums["precision"] += (found / k).mean()
            sums["hit_rate"] += (found > 0).mean()
            sums["mrr"] += (1 / first).mean()
        for family, total in sums.items():
            assert expected[f"{family}@{k}"] == pytest.approx(total / len(relevant), abs=0.02), (family, k)
    assert expected["recall@12"] == 1.0 and expected["hit_rate@20"] == 1.0


def test_saturation_and_confusable_pairs(reports):
    warnings = saturation_warnings(reports[1], "large")
    assert len(warnings) == 1
    assert warnings[0].startswith("large: document-level Recall@k is near 1 where k covers a large share of the "
                                  "12 documents: Recall@3 = ")
    pairs = confusable_pairs(reports)
    assert pairs and all(n >= 1 for _, _, n in pairs)
    assert [n for _, _, n in pairs] == sorted((n for _, _, n in pairs), reverse=True)
    wrong_at_1 = sum(len(q.relevant) for r in reports for q in r.questions
                     if q.retrieved_documents[0] not in q.relevant)
    assert sum(n for _, _, n in pairs) == wrong_at_1


@pytest.mark.skipif(not Path(CHROMIUM).exists() or shutil.which("chromium") is None,
                    reason="Debian's chromium package is not installed (make test installs it)")
@pytest.mark.browser
def test_report_renders_in_headless_chromium(html_file, tmp_path):
    from playwright.sync_api import sync_playwright

    errors, requests = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("request", lambda request: requests.append(request.url))
            page.goto(html_file.as_uri(), wait_until="load")
            assert page.title() == "ragretrieval report: small_chunks vs large_chunks"
            assert page.locator("tr.run-row").count() == 2
            assert page.locator("tr.compare-row").count() == 3  # ndcg@3, recall@3, mrr@3
            assert page.locator("svg.chart").count() == 4 and page.locator("svg.chart polyline").count() == 8
            # both runs carry a search timing: their quality against latency, two points (bm25: no exact line)
            assert page.locator("svg.frontier").count() == 1 and page.locator("svg.frontier circle").count() == 2
            assert page.locator("svg.hist rect").count() == 21
            assert page.locator("tr.changed.fail").count() == 1 and page.locator("tr.changed.pass").count() == 1
            assert "q-suan" in page.locator("tr.changed.fail").inner_text()
            passed = page.locator("tr.changed.pass").inner_text()
            assert "q-tang" in passed and "加盐的汤<script>document.title='pwned'</script>" in passed
            assert page.locator("tr.changed.pass li.rel").count() == 1  # the relevant doc, only in B's top 3
            assert page.locator("div.saturation").count() == 2
            assert page.locator("tr.confusable").count() >= 1
            assert page.locator("script").count() == 0 and page.locator("img").count() == 0
            assert page.locator("svg").first.bounding_box()["width"] > 100  # laid out, not collapsed
        finally:
            browser.close()
    assert errors == []
    assert requests == [html_file.as_uri()]  # nothing fetched but the page itself


def test_histogram_puts_ties_in_the_grey_centre_bin():
    from ragretrieval.analysis.html import histogram

    svg = histogram("d", np.array([0.0, 0.0, 1e-13, 0.5, -1.0]))
    assert svg.count("<rect") == 21
    assert '[-0.05, +0.05): 3 question(s)</title></rect>' in svg and 'fill="#888"><title>[-0.05' in svg
    assert '[+0.45, +0.55): 1 question(s)' in svg and '[-1.05, -0.95): 1 question(s)' in svg
