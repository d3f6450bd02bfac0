"""Run a Jupyter notebook's code cells in this process, without a kernel, and optionally store their outputs.

``python scripts/notebook.py notes/example.ipynb`` runs it and says what ran (exit status 1 if a cell raises, with the
cell's number); ``--write PATH`` also writes the notebook with each cell's outputs (text printed, the rich display of
its last expression, the figures it drew), as Jupyter would, to ``PATH`` (the notebook itself only when ``PATH`` names
it). A fresh clone needs no Jupyter for this; with the ``notebook`` extra, ``jupyter nbconvert --to notebook --execute``
runs the same notebook in a kernel (``tests/test_notebook.py`` does both).
"""
from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import io
import json
import sys
import time
import traceback
from pathlib import Path

__all__ = ["cells", "CellError", "execute", "stored", "main"]


def cells(path) -> list[str]:
    """The source of each code cell of the notebook at ``path``."""
    nb = json.loads(Path(path).read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def _rich(value) -> dict:
    data = {"text/plain": repr(value)}
    for method, mime in (("_repr_html_", "text/html"), ("_repr_latex_", "text/latex")):
        if hasattr(value, method):
            data[mime] = getattr(value, method)()
    return data


def _figures() -> list[dict]:
    import matplotlib.pyplot as plt

    out = []
    for number in plt.get_fignums():
        buffer = io.BytesIO()
        plt.figure(number).savefig(buffer, format="png", dpi=80, bbox_inches="tight")
        out.append({"output_type": "display_data", "metadata": {},
                    "data": {"image/png": base64.b64encode(buffer.getvalue()).decode(), "text/plain": "<Figure>"}})
    plt.close("all")
    return out


class CellError(Exception):
    """A cell raised: its number (counting code cells from 1) and the exception, as ``__cause__``."""

    def __init__(self, number: int):
        super().__init__(f"cell {number} raised")
        self.number = number


def execute(path) -> list[list[dict]]:
    """Run every code cell of ``path`` in order in one namespace (matplotlib on its Agg backend); return each cell's
    outputs in the notebook format. A cell that raises stops the run: :class:`CellError` from its exception."""
    import matplotlib

    matplotlib.use("Agg")
    namespace: dict = {"__name__": "__main__"}
    outputs = []
    for number, source in enumerate(cells(path), 1):
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(tree, f"{path}[cell {number}]", "exec"), namespace)
                value = eval(compile(ast.Expression(last.value), f"{path}[cell {number}]", "eval"), namespace) if last else None
        except Exception as exc:
            raise CellError(number) from exc
        cell = [{"output_type": "stream", "name": "stdout", "text": printed.getvalue()}] if printed.getvalue() else []
        if value is not None:
            cell.append({"output_type": "execute_result", "execution_count": number, "metadata": {},
                         "data": _rich(value)})
        # after the cell's value, as Jupyter's inline backend shows the figures a cell drew
        cell += _figures()
        outputs.append(cell)
    return outputs


def stored(path, outputs: list[list[dict]]) -> str:
    """The notebook at ``path`` with ``outputs`` (one list per code cell) stored in it, as the text of an ``.ipynb``."""
    nb = json.loads(Path(path).read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for number, (c, out) in enumerate(zip(code, outputs), 1):
        c["outputs"], c["execution_count"] = out, number
    return json.dumps(nb, indent=1) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook")
    parser.add_argument("--write", metavar="PATH",
                        help="write the notebook with its outputs to PATH (the notebook itself only if PATH names it)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        outputs = execute(args.notebook)
    except CellError as exc:
        traceback.print_exception(exc.__cause__)
        print(f"{args.notebook}: {exc}; nothing written", file=sys.stderr)
        return 1
    figures = sum("image/png" in o.get("data", {}) for cell in outputs for o in cell)
    print(f"{args.notebook}: {len(outputs)} code cells ran in {time.perf_counter() - start:.1f} s, "
          f"{sum(map(len, outputs))} outputs ({figures} figures)")
    if args.write:
        Path(args.write).write_text(stored(args.notebook, outputs))
        print(f"wrote {args.write}: the notebook with its outputs")
    else:
        print("outputs not stored (--write PATH writes the notebook with them)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
