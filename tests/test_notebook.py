"""The example notebook (notes/example.ipynb) runs in Jupyter's own way, ``jupyter nbconvert --execute`` in a kernel,
and shows what it stores; the project's runner (scripts/notebook.py, no Jupyter needed) says what it ran and writes
the notebook with its outputs only to the path it is given."""
import json
import sys
from pathlib import Path

import processes

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notes" / "example.ipynb"


def _code_outputs(path) -> list[list[dict]]:
    return [c["outputs"] for c in json.loads(Path(path).read_text())["cells"] if c["cell_type"] == "code"]


def _kinds(cells):
    # a kernel may add stderr (a font cache built on a fresh machine): what the notebook shows is the rest
    return [[o["output_type"] for o in cell if o.get("name") != "stderr"] for cell in cells]


def _printed(cells):
    return [["".join(o["text"]) for o in cell if o.get("name") == "stdout"] for cell in cells]


def test_the_example_notebook_runs_under_jupyter_nbconvert_and_shows_what_it_stores(tmp_path):
    # nbclient's clocks judge nothing here: no limit on a cell (-1), an hour for the kernel to start and for a cell's
    # last outputs (its default of 4 s dropped them, with a warning only, on a busy machine); the run is called hung
    # by its work (tests/processes.py: nbconvert and its kernel together)
    done = processes.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                          "--ExecutePreprocessor.kernel_name=python3", "--ExecutePreprocessor.timeout=-1",
                          "--ExecutePreprocessor.startup_timeout=3600", "--ExecutePreprocessor.iopub_timeout=3600",
                          "--ExecutePreprocessor.raise_on_iopub_timeout=True",
                          "--output-dir", str(tmp_path), str(NOTEBOOK)],
                         capture_output=True, text=True, cwd=tmp_path, cpu=900)
    assert done.returncode == 0, done.stderr[-3000:]
    ran, stored = _code_outputs(tmp_path / NOTEBOOK.name), _code_outputs(NOTEBOOK)
    assert _kinds(ran) == _kinds(stored)
    # the printed text is exact (the threshold, the separating condition); figures and tables are drawn again
    assert _printed(ran) == _printed(stored)
    assert sum("image/png" in o.get("data", {}) for cell in ran for o in cell) == 2  # the density, the outlier curve
    shown = [o["data"] for cell in ran for o in cell if o["output_type"] == "execute_result"]
    assert shown and all("text/html" in d and "text/latex" in d for d in shown)  # the result objects' rich display
    assert "equal for the strict mask; differs for the inclusive mask (the default)" in str(_printed(ran))


def _tiny_notebook(path, source: list[str]) -> Path:
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": s} for s in source]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_the_runner_says_what_ran_and_writes_only_to_the_path_it_is_given(tmp_path, script, capsys):
    runner = script("notebook")
    source = _tiny_notebook(tmp_path / "tiny.ipynb", [
        "import derive\nprint(derive.weights(derive.Model(T=2, weights='mean')).kappa)",
        "import matplotlib.pyplot as plt\nplt.plot([0, 1])\nderive.Model(T=2, weights='mean')"])
    before = source.read_text()
    assert runner.main([str(source)]) == 0
    out = capsys.readouterr().out
    assert f"{source}: 2 code cells ran in" in out and "3 outputs (1 figures)" in out
    assert "outputs not stored (--write PATH writes the notebook with them)" in out
    assert source.read_text() == before
    target = tmp_path / "out" / "ran.ipynb"
    target.parent.mkdir()
    assert runner.main([str(source), "--write", str(target)]) == 0
    assert f"wrote {target}: the notebook with its outputs" in capsys.readouterr().out
    assert source.read_text() == before
    outputs = _code_outputs(target)
    assert _printed(outputs) == [["1/2\n"], []]
    # the value of the last expression, then the figure, in the order Jupyter shows them
    assert _kinds(outputs) == [["stream"], ["execute_result", "display_data"]]


def test_a_cell_that_raises_is_named_and_nothing_is_written(tmp_path, script, capsys):
    runner = script("notebook")
    source = _tiny_notebook(tmp_path / "bad.ipynb", ["x = 1", "1/0"])
    assert runner.main([str(source), "--write", str(tmp_path / "out.ipynb")]) == 1
    assert f"{source}: cell 2 raised; nothing written" in capsys.readouterr().err
    assert not (tmp_path / "out.ipynb").exists()
