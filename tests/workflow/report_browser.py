"""Debian's Chromium, driven by Selenium, for the report's browser check (part
of the README's fresh-environment test, tests/workflow/test_readme.py: the
report of command 1's quick run, built by the README's report command).

``install_if_missing`` installs ``selenium`` from the package index (pip) and
``chromium`` with ``chromium-driver`` from Debian's packages (apt-get, root
only) when they are missing, as tests/workflow/slurm_cluster.py installs
SLURM, and says why they cannot be had otherwise. ``chromium`` starts a
headless browser on the report; ``Report`` clicks through it as a reader
does: a category in the menu, each of its subcategories, each item's view
button, and reads what the item shows (an HTML table in the report's frame,
an image). ``walk_report`` clicks every item of every category and checks
what each shows against the run's tables.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from mkl.workflow.tables import fmt_pm

CHROMIUM, DRIVER = "chromium", "chromedriver"


def _run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 900), **kw)


def install_if_missing() -> str | None:
    """Install selenium (pip) and chromium with chromium-driver (apt-get)
    where they are missing; return why they cannot be had (None when ready)."""
    if importlib.util.find_spec("selenium") is None:
        done = _run([sys.executable, "-m", "pip", "install", "-q", "selenium"])
        importlib.invalidate_caches()
        if done.returncode != 0 or importlib.util.find_spec("selenium") is None:
            return f"pip install selenium failed: {done.stderr[-500:]}"
    if shutil.which(CHROMIUM) and shutil.which(DRIVER):
        return None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "chromium/chromium-driver are not installed and apt-get cannot be run as root here"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"],
    ):
        done = _run(cmd, env=env)
        if done.returncode != 0:
            return f"{' '.join(cmd)} failed: {done.stderr[-500:]}"
    return None


@contextlib.contextmanager
def chromium(width: int = 1600, height: int = 1000):
    """A headless Chromium under chromedriver (both Debian's), closed on exit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = shutil.which(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={width},{height}")
    driver = webdriver.Chrome(service=Service(shutil.which(DRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


class Report:
    """A Snakemake report open in ``driver``, clicked through as a reader does."""

    def __init__(self, driver, path):
        from selenium.webdriver.common.by import By

        self.driver, self.by = driver, By
        driver.get(f"file://{os.fspath(path)}")
        self.wait(lambda: self.menu_links())

    def wait(self, found, timeout: float = 20.0):
        """``found()``'s first true value, polled until ``timeout`` seconds."""
        end = time.monotonic() + timeout
        while True:
            value = found()
            if value or time.monotonic() > end:
                return value
            time.sleep(0.1)

    def text(self) -> str:
        """The page's visible text (the navigation and the landing page)."""
        return self.driver.find_element(self.by.TAG_NAME, "body").text

    def _links(self, names) -> dict:
        links = self.driver.find_elements(self.by.CSS_SELECTOR, "nav li a, ul li a")
        return {a.text: a for a in links if a.text in names}

    def menu_links(self) -> list[str]:
        """The categories the menu lists (the headings aside)."""
        from_js = "return Object.keys(categories)"
        return sorted(self.driver.execute_script(from_js))

    def subcategories(self, category: str) -> list[str]:
        return sorted(self.driver.execute_script(f"return Object.keys(categories[{category!r}])"))

    def items(self, category: str, subcategory: str) -> list[str]:
        script = f"return categories[{category!r}][{subcategory!r}]"
        return list(self.driver.execute_script(script))

    def open_menu(self) -> None:
        """Back to the menu of categories (the breadcrumb's first step)."""
        self.driver.execute_script("app.setView({navbarMode: 'menu'})")

    def click(self, label: str) -> None:
        """Click the menu entry (category or subcategory) named ``label``."""
        link = self.wait(lambda: self._links({label}).get(label))
        if link is None:
            raise AssertionError(f"the menu shows no {label!r}")
        link.click()

    def show(self, path: str):
        """Click the view button of the item ``path`` in the listed items and
        return what the page then shows: ("html", the frame's visible text,
        its cells' classes) or ("img", (natural width, height)), or ("other", mime)."""
        rows = self.wait(
            lambda: [
                tr
                for tr in self.driver.find_elements(self.by.CSS_SELECTOR, "table tr")
                if tr.find_elements(self.by.TAG_NAME, "td") and path in tr.text
            ]
        )
        if not rows:
            raise AssertionError(f"the item list shows no {path}")
        rows[0].find_elements(self.by.CSS_SELECTOR, "a[type=button]")[0].click()
        mime = self.driver.execute_script(f"return results[{path!r}].mime_type")
        if mime == "text/html":
            frame = self.wait(lambda: self.driver.find_elements(self.by.TAG_NAME, "iframe"))
            self.driver.switch_to.frame(frame[0])
            try:
                body = self.wait(lambda: self.driver.find_elements(self.by.TAG_NAME, "table"))
                text = self.driver.find_element(self.by.TAG_NAME, "body").text if body else ""
                beyond = len(self.driver.find_elements(self.by.CSS_SELECTOR, "td.beyond"))
            finally:
                self.driver.switch_to.default_content()
            return "html", text, beyond
        if mime.startswith("image/"):
            size = self.wait(
                lambda: self.driver.execute_script(
                    "const i = document.querySelector('div.p-3 > img');"
                    "return i && i.complete && i.naturalWidth ? [i.naturalWidth, i.naturalHeight]"
                    " : null"
                )
            )
            return "img", size, 0
        return "other", mime, 0


def _expected(root: Path, path: str) -> tuple[list[str], int]:
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


def walk_report(html: Path, root: Path, screenshots: Path) -> list[str]:
    """Open the report ``html`` of the run in ``root`` in Chromium and click
    every item of every category as a reader does: each table must show its
    cells, ours and the paper's, as visible text, the cells beyond two paper
    sd marked, and each figure must load (a screenshot of each in
    ``screenshots``). Returns the items seen, in order."""
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
                    driver.save_screenshot(str(screenshots / (path.replace("/", "_") + ".png")))
                    if path.endswith(".png"):
                        assert kind == "img" and shown and min(shown) > 100, (path, shown)
                        continue
                    assert kind == "html", (path, kind, shown)
                    texts, n_beyond = _expected(root, path)
                    missing = [t for t in texts if t not in shown]
                    assert texts and not missing, (path, missing)
                    assert beyond == n_beyond, (path, beyond, n_beyond)
    return seen
