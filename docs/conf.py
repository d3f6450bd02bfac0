"""The documentation site (Sphinx, MyST-NB): README as its front page, the pages of ``docs/``, the notes
(``docs/notes`` is a link to ``../notes``), the API reference from the docstrings of ``derive.__all__`` and
``verify.__all__``, and the example notebook with the outputs stored in it.

    python -m sphinx -W docs docs/_build/html

``tests/test_docs.py`` builds it so, every warning an error.
"""
import re
from pathlib import Path

project = "attention-rmt"
author = "The attention-rmt contributors"
copyright = "2026, " + author
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.mathjax"]
root_doc = "index"
# notes/api.md is the API reference as one Markdown file: the site's is built from the docstrings themselves
exclude_patterns = ["_build", "notes/api.md"]
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
# the notebook is shown with the outputs stored in it (the test suite runs it, under nbconvert and without Jupyter)
nb_execution_mode = "off"
autodoc_member_order = "bysource"
# the public names are those of __all__ (each class with its fields); a value among them, which automodule leaves
# out, is named in api.md (autodata) and documented by the docstring where it is defined
autodoc_default_options = {"members": True, "undoc-members": True}
html_theme = "alabaster"
html_title = "attention-rmt"
html_theme_options = {"description": "a derivation checker for the random-matrix analysis of attention pooling"}


def _site_links(text: str, prefix: str) -> str:
    """Links as a reader of the repository follows them, made the site's: ``[text](PREFIXnotes/x.md)`` (from README,
    ``prefix`` empty; from the pages of docs/, ``../``) to the document ``/notes/x``, reached through the link
    docs/notes, which a path would resolve out of the site; ``[text](../README.md)`` to the front page."""
    text = re.sub(rf"\[([^\]`]+)\]\({re.escape(prefix)}notes/([\w/]+)\.(?:md|ipynb)\)", r"{doc}`\1 </notes/\2>`", text)
    return re.sub(r"\[([^\]`]+)\]\(\.\./README\.md\)", r"{doc}`\1 </index>`", text)


def _page_read(app, docname, source):
    if not docname.startswith("notes/"):
        source[0] = _site_links(source[0], "../")


def _readme_read(app, path, docname, source):
    if Path(path).name == "README.md":
        source[0] = _site_links(source[0], "")


def _value_doc(app, what, name, obj, options, lines):
    """A public value (``derive.LAWS``) documented by the string after its assignment in the module that defines it
    (``derive._WHERE`` names the module), as ``scripts/apidoc.py`` does."""
    if what != "data":
        return
    from importlib import import_module

    from sphinx.pycode import ModuleAnalyzer

    package, _, attribute = name.rpartition(".")
    where = getattr(import_module(package), "_WHERE", {}).get(attribute)
    if where is not None:
        module, attribute = where if isinstance(where, tuple) else (where, attribute)
        # in place of the docstring of the value's type (a tuple's, say), which autodoc finds otherwise
        lines[:] = ModuleAnalyzer.for_module(module).find_attr_docs().get(("", attribute), lines)


def setup(app):
    app.connect("autodoc-process-docstring", _value_doc)
    app.connect("source-read", _page_read)
    app.connect("include-read", _readme_read)
