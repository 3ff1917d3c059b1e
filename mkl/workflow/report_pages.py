"""The tables as HTML pages, for the report (``snakemake --report``): the
report shows an HTML item in the page and offers a Markdown one only as a
download. Each page is drawn from the same data as its Markdown file (the
results table, the comparison with the paper, the paper's tables, the
fidelity cells, a timing figure's numbers), self-contained (its style inline),
and holds the tables as text, so that a browser shows every cell:

* a missing value (no fit, an algorithm not run on a dataset, a paper cell
  without a number) reads ``–`` (:data:`MISSING`);
* a cell where |ours - paper| exceeds two of the paper's standard deviations
  is shaded and marked ``*`` (:data:`BEYOND`);
* our numbers and the paper's stand in adjacent columns.

A caption is the Markdown file's own (the same text): its ``#`` lines become
headings, its ``- `` lines list items, its other lines paragraphs.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .._io import write_text

MISSING = "–"
# how a table of the Markdown files says a cell has no number: an algorithm not
# run on a dataset ("-"), no fits ("n/a"), an empty paper cell
MISSING_MARKS = frozenset({"", "-", "n/a", "nan", "None"})
BEYOND = "beyond"  # the class of a cell beyond two paper sd

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.2em;
       color: #1b1b1b; background: #fff; font-size: 14px; line-height: 1.4; }
h1 { font-size: 1.35em; margin: 0 0 0.5em; }
h2 { font-size: 1.15em; margin: 1.4em 0 0.4em; }
p, li { max-width: 60em; }
table { border-collapse: collapse; margin: 0.6em 0 1em; }
th, td { border: 1px solid #c8c8c8; padding: 0.25em 0.6em; text-align: right;
         white-space: nowrap; }
th { background: #eef1f5; }
th.row, td.row { text-align: left; }
td.paper { color: #555; background: #fafafa; }
td.beyond { background: #fbd5d2; font-weight: 600; }
td.missing { color: #999; text-align: center; }
td.note { color: #8a4b00; }
tr.group th { text-align: center; }
.legend { color: #444; font-size: 0.95em; }
.swatch { display: inline-block; width: 1em; height: 1em; vertical-align: -0.15em;
          background: #fbd5d2; border: 1px solid #c8c8c8; }
details { margin: 0.4em 0 0.8em; }
summary { cursor: pointer; color: #1a4f8b; }
"""

BEYOND_LEGEND = (
    '<p class="legend"><span class="swatch"></span> * ours differs from the paper\'s mean by '
    "more than two of the paper's standard deviations; " + MISSING + " no number.</p>"
)


@dataclass(frozen=True)
class Cell:
    """A table cell: its text, its class (``row``, ``paper``, ``beyond``,
    ``missing``, ``note``) and how many columns it spans."""

    text: str
    css: str = ""
    span: int = 1


def value(text, css: str = "") -> Cell:
    """A cell of a table's text; a missing value (:data:`MISSING_MARKS`, NaN,
    None) reads :data:`MISSING`."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return Cell(MISSING, "missing")
    text = str(text).strip()
    if text in MISSING_MARKS:
        return Cell(MISSING, "missing")
    return Cell(text, css)


def number(x, digits: int = 1, css: str = "") -> Cell:
    """A number rounded to ``digits`` decimals, or :data:`MISSING`."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return Cell(MISSING, "missing")
    return Cell(f"{float(x):.{digits}f}", css)


def header(columns: Iterable[str], keys: int = 1) -> list[list[Cell]]:
    """The one header row of a table's ``columns``, the first ``keys`` of them
    styled as the row's key (``row``), as the body's key cells are."""
    return [[Cell(str(c), "row" if k < keys else "") for k, c in enumerate(columns)]]


def table(head: Sequence[Sequence[Cell]], body: Iterable[Sequence[Cell]]) -> str:
    """An HTML table: header rows of ``head`` (a spanning first row, then the
    columns), one row per ``body`` item, its first cell the row's label."""
    out = ["<table>", "<thead>"]
    for k, row in enumerate(head):
        group = ' class="group"' if k < len(head) - 1 else ""
        out.append(f"<tr{group}>" + "".join(_cell("th", c) for c in row) + "</tr>")
    out.append("</thead>")
    out.append("<tbody>")
    for row in body:
        first, rest = row[0], row[1:]
        label = Cell(first.text, first.css or "row", first.span)
        out.append("<tr>" + _cell("th", label) + "".join(_cell("td", c) for c in rest) + "</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out)


def _cell(tag: str, cell: Cell) -> str:
    css = f' class="{cell.css}"' if cell.css else ""
    span = f' colspan="{cell.span}"' if cell.span > 1 else ""
    return f"<{tag}{css}{span}>{html.escape(cell.text)}</{tag}>"


def frame_table(df, css=None) -> str:
    """A DataFrame as a table, its columns the header, each cell through
    :func:`value`; ``css(row, column)`` gives a cell's class."""
    head = header(df.columns)
    body = [
        [value(v, css(row, col) if css else "") for col, v in row.items()]
        for _, row in df.iterrows()
    ]
    return table(head, body)


def caption(text: str) -> str:
    """A Markdown file's caption as HTML: ``#`` lines headings, ``- `` lines
    list items, every other line a paragraph (the captions' only syntax)."""
    out, items = [], []
    for line in text.splitlines():
        line = line.rstrip()
        if line.startswith("- "):
            items.append(f"<li>{html.escape(line[2:])}</li>")
            continue
        if items:
            out.append("<ul>" + "".join(items) + "</ul>")
            items = []
        if line.startswith("## "):
            out.append(f"<h2>{html.escape(line[3:])}</h2>")
        elif line.startswith("# "):
            out.append(f"<h1>{html.escape(line[2:])}</h1>")
        elif line:
            out.append(f"<p>{html.escape(line)}</p>")
    if items:
        out.append("<ul>" + "".join(items) + "</ul>")
    return "\n".join(out)


def heading(text: str, level: int = 2) -> str:
    return f"<h{level}>{html.escape(text)}</h{level}>"


def paragraph(text: str, css: str = "") -> str:
    cls = f' class="{css}"' if css else ""
    return f"<p{cls}>{html.escape(text)}</p>"


def collapsed(summary: str, body: str) -> str:
    """A section shown folded, under a line that says what it holds."""
    return f"<details><summary>{html.escape(summary)}</summary>\n{body}\n</details>"


def page(title: str, parts: Iterable[str]) -> str:
    """A self-contained HTML page of ``parts`` (HTML fragments)."""
    body = "\n".join(parts)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def write_page(path, title: str, parts: Iterable[str]) -> None:
    """:func:`page`, written atomically."""
    write_text(path, page(title, parts))
