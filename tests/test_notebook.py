"""The example notebook (notes/example.ipynb) runs cell by cell in the default suite, without Jupyter
(scripts/notebook.py), and the outputs stored in it are the ones it prints now."""
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notes" / "example.ipynb"


def test_the_example_notebook_runs_and_shows_what_it_stores(script):
    outputs = script("notebook").execute(NOTEBOOK)
    stored = [c["outputs"] for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    assert len(outputs) == len(stored)
    kinds = lambda cells: [[o["output_type"] for o in cell] for cell in cells]  # noqa: E731
    assert kinds(outputs) == kinds(stored)
    # the printed text is exact (the threshold, the separating condition); figures and tables are drawn again
    text = lambda cells: [[o["text"] for o in cell if o["output_type"] == "stream"] for cell in cells]  # noqa: E731
    assert text(outputs) == text(stored)
    figures = sum(1 for cell in outputs for o in cell if "image/png" in o.get("data", {}))
    assert figures == 2  # the bulk density and the outlier curve
    shown = [o["data"] for cell in outputs for o in cell if o["output_type"] == "execute_result"]
    assert all("text/html" in d and "text/latex" in d for d in shown[:-1])  # the result objects' rich display
    assert "equal for the strict mask; differs for the inclusive mask (the default)" in "".join(sum(text(outputs), []))
