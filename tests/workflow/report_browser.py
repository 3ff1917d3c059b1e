"""Debian's Chromium, driven by Selenium, for the report's browser test.

``install_if_missing`` installs ``selenium`` from the package index (pip) and
``chromium`` with ``chromium-driver`` from Debian's packages (apt-get, root
only) when they are missing, as tests/workflow/slurm_cluster.py installs
SLURM, and says why they cannot be had otherwise. ``chromium`` starts a
headless browser on the report; ``Report`` clicks through it as a reader
does: a category in the menu, each of its subcategories, each item's view
button, and reads what the item shows (an HTML table in the report's frame,
an image).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
import time

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
