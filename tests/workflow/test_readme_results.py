"""The README's results section is generated from the fidelity record of the
runs (docs/fidelity.csv): it must be exactly what that record renders to, and
the record must cover every cell of resources/paper_results.csv in the columns
the fidelity stage writes."""

from pathlib import Path

import pandas as pd
import pytest

from mkl.workflow.fidelity import (
    COLUMNS,
    OK,
    README_BEGIN,
    README_END,
    read_cells,
    readme_results,
    update_readme,
)

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "docs" / "fidelity.csv"


def test_readme_results_are_rendered_from_the_record():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start, end = readme.index(README_BEGIN), readme.index(README_END) + len(README_END)
    assert readme[start:end] == readme_results(read_cells(RECORD)), (
        "README.md's results differ from docs/fidelity.csv: run python -m mkl.workflow.fidelity"
    )


def test_the_record_covers_every_paper_cell():
    cells = read_cells(RECORD)
    assert list(cells.columns) == COLUMNS
    paper = pd.read_csv(ROOT / "resources" / "paper_results.csv")
    key = ["paper", "table", "dataset", "method", "metric"]
    assert sorted(map(tuple, cells[key].values)) == sorted(map(tuple, paper[key].values))
    ok = cells[cells["status"] == OK]
    assert ok["ours_mean"].notna().all() and (ok["n_splits"] > 0).all()


def test_update_rewrites_only_the_generated_block(tmp_path):
    cells = read_cells(RECORD)
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{README_BEGIN}\nstale\n{README_END}\nafter\n", encoding="utf-8")
    csv = tmp_path / "fidelity.csv"
    cells.to_csv(csv, index=False)
    assert update_readme(readme, csv)
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("before\n") and text.endswith("\nafter\n") and "stale" not in text
    assert not update_readme(readme, csv)  # idempotent
    readme.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="has no block between"):
        update_readme(readme, csv)
