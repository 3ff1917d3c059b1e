"""The report a researcher reads, checked in a real browser: the quick run
(the default target) and its report (``snakemake --report report.html built``),
opened in Debian's Chromium through Selenium (tests/workflow/report_browser.py,
installed when missing as the SLURM test installs SLURM, and skipped where it
cannot be). Every item of every category is clicked as a reader clicks it: each
table must show its cells, ours and the paper's, as visible text, the cells
beyond two paper sd marked, and each figure must load."""

import os
import shutil

import numpy as np
import pandas as pd
import pytest

from mkl.workflow.tables import fmt_pm

from ..conftest import REPO
from .report_browser import Report, chromium, install_if_missing
from .test_snakemake import snakemake

pytestmark = [pytest.mark.workflow, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser_ready():
    why = install_if_missing()
    if why:
        if os.environ.get("MKL_REQUIRE_BROWSER"):
            pytest.fail(why)
        pytest.skip(why)


def _quick_workdir(root):
    """The repository's configuration and resources: the quick run as a user
    makes it (command 1)."""
    root.mkdir()
    shutil.copytree(REPO / "config", root / "config")
    shutil.copytree(REPO / "resources", root / "resources")
    return root


def _expected(root, path: str) -> tuple[list[str], int]:
    """The cells an item's page must show as text (ours and the paper's, as
    the tables format them) and how many of them are beyond two paper sd."""
    tables = root / "results" / "tables"
    name = os.path.basename(path)
    if path.startswith("results/tables/fidelity"):
        cells = pd.read_csv(tables / "fidelity.csv")
        shown = cells[cells["status"] == "ok"]
        texts = [
            f"{m:.2f}" + (f" ± {s:.2f}" if np.isfinite(s) else "")
            for m, s in [
                *zip(shown.paper_mean, shown.paper_std, strict=True),
                *zip(shown.ours_mean, shown.ours_std, strict=True),
            ]
        ]
        return texts, int((shown["within_2sd"].astype(str) == "False").sum())
    experiment = path.split("/")[2]
    if name == "results.html":
        summary = pd.read_csv(tables / experiment / "results.csv")
        texts = [
            fmt_pm(100 * m, 100 * s)
            for m, s in zip(summary.accuracy_mean, summary.accuracy_std, strict=True)
        ]
        return texts, 0
    comparison = pd.read_csv(tables / experiment / "paper.csv")
    texts = list(comparison["ours"]) + list(comparison["paper"])
    return texts, int(comparison["beyond_2sd"].sum())


@pytest.mark.workflow(seconds=150)
def test_every_table_and_figure_of_the_quick_report_shows_in_chromium(tmp_path, browser_ready):
    root = _quick_workdir(tmp_path / "quick")
    run = snakemake(root)
    assert run.returncode == 0, run.stderr[-3000:]
    html = tmp_path / "report.html"
    report = snakemake(root, "--report", str(html), "built")
    assert report.returncode == 0, report.stderr[-3000:]
    seen = []
    with chromium() as driver:
        page = Report(driver, html)
        # the landing page says what this is and names every category
        landing = page.text()
        assert "five papers' tables regenerated" in landing
        categories = page.menu_links()
        assert categories == ["fidelity", "quick"]
        for category in categories:
            assert category in landing
            subcategories = page.subcategories(category)
            for sub in subcategories:
                page.open_menu()
                page.click(category)
                if len(subcategories) > 1:  # a single one opens with its category
                    page.click(sub)
                for path in page.items(category, sub):
                    kind, shown, beyond = page.show(path)
                    seen.append(path)
                    driver.save_screenshot(str(tmp_path / (path.replace("/", "_") + ".png")))
                    if path.endswith(".png"):
                        assert kind == "img" and shown and min(shown) > 100, (path, shown)
                        continue
                    assert kind == "html", (path, kind, shown)
                    texts, n_beyond = _expected(root, path)
                    missing = [t for t in texts if t not in shown]
                    assert texts and not missing, (path, missing)
                    assert beyond == n_beyond, (path, beyond, n_beyond)
    tables = [f"results/tables/quick/{n}.html" for n in ("results", "paper", "paper_tables")]
    figures = ["results/figures/quick/results.png", "results/figures/fidelity.png"]
    assert sorted(seen) == sorted([*tables, *figures, "results/tables/fidelity.html"])
