"""Run a Jupyter notebook's code cells in this process, without a kernel, and optionally store their outputs.

``python scripts/notebook.py notes/example.ipynb`` runs it (exit status 1 if a cell raises); ``--write`` also stores
each cell's outputs in the file (text printed, the rich display of its last expression, the figures it drew), as
Jupyter would. ``tests/test_notebook.py`` runs the example notebook this way in the default suite: a fresh clone
needs no Jupyter to check it.
"""
from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import io
import json
import sys
from pathlib import Path

__all__ = ["cells", "execute", "main"]


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


def execute(path) -> list[list[dict]]:
    """Run every code cell of ``path`` in order in one namespace (matplotlib on its Agg backend); return each cell's
    outputs in the notebook format. A cell that raises stops the run with its exception."""
    import matplotlib

    matplotlib.use("Agg")
    namespace: dict = {"__name__": "__main__"}
    outputs = []
    for number, source in enumerate(cells(path), 1):
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(tree, f"{path}[cell {number}]", "exec"), namespace)
            value = eval(compile(ast.Expression(last.value), f"{path}[cell {number}]", "eval"), namespace) if last else None
        cell = [{"output_type": "stream", "name": "stdout", "text": printed.getvalue()}] if printed.getvalue() else []
        cell += _figures()
        if value is not None:
            cell.append({"output_type": "execute_result", "execution_count": number, "metadata": {},
                         "data": _rich(value)})
        outputs.append(cell)
    return outputs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook")
    parser.add_argument("--write", action="store_true", help="store the outputs in the notebook")
    args = parser.parse_args(argv)
    outputs = execute(args.notebook)
    if args.write:
        nb = json.loads(Path(args.notebook).read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        for number, (c, out) in enumerate(zip(code, outputs), 1):
            c["outputs"], c["execution_count"] = out, number
        Path(args.notebook).write_text(json.dumps(nb, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
